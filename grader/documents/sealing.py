"""Sealed submissions: a submission travels encrypted to the arena's public key.

A pull request's files are readable by every account that can read the repository, so the
kit seals the submission (its zip) to the arena's public key with libsodium's sealed box
(PyNaCl's `SealedBox`: an ephemeral X25519 key agreement, then XSalsa20-Poly1305). Only the
holder of the arena's private key opens it, and a changed byte fails to open. Beside the
sealed file goes a plain manifest: the handle, the kit version, the digest of the sealed bytes
(what the pull request carries) and the digest of the plain submission (what rounds record
and what a staff review clears).

The private key is `ARENA_SUBMISSION_KEY` (base64; production's is a workflow secret given
only to the steps that start a sandbox) or, where that is unset, this user's own key file
(`arena-submission.key` in the arena's folder of the user's configuration), made on first use
by the kit build: so a kit built in a checkout seals to a key that checkout's arena opens.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from nacl.exceptions import CryptoError
from nacl.public import PrivateKey, PublicKey, SealedBox

from grader.documents.schema import problems_of
from grader.documents.yaml_io import DocumentError, decode_text, dump_yaml, load_yaml

SCHEMA_VERSION = 1
SEALED_NAME = "submission.sealed"
MANIFEST_NAME = "manifest.yaml"
PACKAGE_FILES = (MANIFEST_NAME, SEALED_NAME)
KEY_ENV = "ARENA_SUBMISSION_KEY"
PUBLIC_KEY_ENV = "ARENA_SUBMISSION_PUBLIC_KEY"
KEY_FILE = "arena-submission.key"
MAX_MANIFEST_BYTES = 16 * 1024
REPACKAGE = (
    "submissions are sealed: run `make package HANDLE=<your handle>` with the current kit (the arena's "
    "Kit page) and commit the two files of its `submission/` folder (manifest.yaml and submission.sealed) "
    "in place of the plain files"
)


class SealError(ValueError):
    """A sealed submission that cannot be opened or checked, or a key that cannot be read."""


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def encode_key(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _decode_key(text: str, what: str) -> bytes:
    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != 32:
        raise SealError(f"{what}: not a key (32 bytes, base64)")
    return raw


def key_path() -> Path:
    """This user's submission key file, outside any repository: in `ARENA_CONFIG_DIR`, else
    the arena's folder of the user's configuration."""
    folder = os.environ.get("ARENA_CONFIG_DIR") or str(
        Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "arena"
    )
    return Path(folder) / KEY_FILE


def private_key(create: bool = False) -> PrivateKey:
    """The arena's private key: `ARENA_SUBMISSION_KEY`, else this user's key file (made when
    `create` and absent)."""
    text = os.environ.get(KEY_ENV)
    if text:
        return PrivateKey(_decode_key(text, KEY_ENV))
    path = key_path()
    if not path.exists():
        if not create:
            raise SealError(
                f"no submission key: {KEY_ENV} is unset and this user has no key file "
                f"({KEY_FILE}); `arena kit build` makes one, and its kit seals to it"
            )
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        key = PrivateKey.generate()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(encode_key(bytes(key)) + "\n")
        return key
    return PrivateKey(_decode_key(path.read_text(encoding="ascii", errors="replace"), str(path)))


def public_key_text() -> str:
    """The public key a kit built here seals to: `ARENA_SUBMISSION_PUBLIC_KEY` (production's,
    a plain repository variable), else the public half of `private_key`, made on first use."""
    text = os.environ.get(PUBLIC_KEY_ENV)
    if text:
        return encode_key(_decode_key(text, PUBLIC_KEY_ENV))
    return encode_key(bytes(private_key(create=True).public_key))


OWNER_KEY_FILE = ".arena-owner.key"


def owner_public_key(path: Path) -> str:
    """The public half of the owner's own key pair kept at `path` (made when absent): the
    manifest carries it, so that the arena can seal things meant for the owner alone (their
    agent's logs) to them."""
    path = Path(path)
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(encode_key(bytes(PrivateKey.generate())) + "\n")
    return encode_key(bytes(read_key_file(path).public_key))


def read_key_file(path: Path) -> PrivateKey:
    """The private key kept in the file at `path` (base64)."""
    return PrivateKey(_decode_key(Path(path).read_text(encoding="ascii", errors="replace"), str(path)))


@dataclass(frozen=True)
class Manifest:
    """The plain half of a sealed submission."""

    handle: str
    kit_version: str
    sealed: str  # sha256 of the sealed bytes
    digest: str  # the plain submission's digest (grader.documents.submission), what rounds record
    recipient: str  # the public key it is sealed to
    owner_key: str | None = None  # the owner's own public key, to seal their logs to them

    def to_dict(self) -> dict:
        return {"schema_version": SCHEMA_VERSION} | asdict(self)

    def to_yaml(self) -> str:
        return dump_yaml(self.to_dict())

    @classmethod
    def from_bytes(cls, data: bytes, source: str = MANIFEST_NAME) -> Manifest:
        if len(data) > MAX_MANIFEST_BYTES:
            raise SealError(f"{source}: {len(data)} bytes, more than {MAX_MANIFEST_BYTES}")
        try:
            doc = load_yaml(decode_text(data, source), source)
        except DocumentError as exc:
            raise SealError(str(exc)[:300]) from None
        if not isinstance(doc, dict) or doc.get("schema_version") != SCHEMA_VERSION:
            raise SealError(f"{source}: schema_version must be {SCHEMA_VERSION}")
        problems = problems_of(doc, "manifest")  # grader/documents/data/manifest.schema.json
        if isinstance(doc.get("owner_key"), str):
            try:
                _decode_key(doc["owner_key"], "owner_key")
            except SealError as exc:
                problems.append(str(exc))
        if problems:
            raise SealError(f"{source}: " + "; ".join(problems))
        return cls(
            doc["handle"], doc["kit_version"], doc["sealed"], doc["digest"], doc["recipient"], doc.get("owner_key")
        )


def seal(plain: bytes, recipient: str) -> bytes:
    """`plain` sealed to the public key `recipient` (base64)."""
    return SealedBox(PublicKey(_decode_key(recipient, "the arena's public key"))).encrypt(plain)


def open_sealed(sealed: bytes, manifest: Manifest, key: PrivateKey | None = None) -> bytes:
    """The plain bytes of a sealed submission, checked against its manifest."""
    if sha256(sealed) != manifest.sealed:
        raise SealError(f"{SEALED_NAME}: its digest is {sha256(sealed)}, the manifest says {manifest.sealed}")
    key = key or private_key()
    if encode_key(bytes(key.public_key)) != manifest.recipient:
        raise SealError(
            f"{SEALED_NAME}: sealed to another arena's key ({manifest.recipient[:12]}...), not this "
            f"one's ({encode_key(bytes(key.public_key))[:12]}...): package it with this arena's kit"
        )
    try:
        return SealedBox(key).decrypt(sealed)
    except CryptoError:
        raise SealError(
            f"{SEALED_NAME}: does not open with this arena's key (damaged, or not sealed by the kit)"
        ) from None


def is_package(folder: Path) -> bool:
    """The folder is a sealed submission (it holds a manifest or a sealed file)."""
    return any((Path(folder) / name).exists() for name in PACKAGE_FILES)


def read_package(folder: Path) -> tuple[Manifest, bytes]:
    """The manifest and the sealed bytes of a package folder, which holds those two files only."""
    folder = Path(folder)
    names = sorted(p.name for p in folder.iterdir() if p.name not in ("__pycache__", ".git"))
    extra = [n for n in names if n not in PACKAGE_FILES]
    missing = [n for n in PACKAGE_FILES if n not in names]
    if extra or missing:
        raise SealError(
            f"{folder.name}: a sealed submission holds exactly {' and '.join(PACKAGE_FILES)}"
            + (f"; missing {', '.join(missing)}" if missing else "")
            + (f"; also holds {', '.join(extra[:5])}" if extra else "")
            + (f" ({REPACKAGE})" if "agent.py" in extra else "")
        )
    for name in PACKAGE_FILES:
        if (folder / name).is_symlink() or not (folder / name).is_file():
            raise SealError(f"{name}: not a regular file")
    return Manifest.from_bytes((folder / MANIFEST_NAME).read_bytes()), (folder / SEALED_NAME).read_bytes()
