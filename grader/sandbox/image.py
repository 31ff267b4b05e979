"""The agents' docker image: `python:3.11-slim` plus the pinned numpy, built with no network.

The build never reaches the network from inside: the numpy wheel is fetched on the host
(pip, the pinned version for this machine's architecture), its sha256 checked against the
pin below, and copied into the build context, where it is unpacked into /arena/site (a
wheel is a zip whose root is site-packages), the folder the runner puts on its path in
every backend.

The base is `python:3.11-slim` wherever it can be pulled (production: a runner with a
registry). Where it cannot (no registry answers), a stand-in is built from Debian's
packages by `mmdebstrap` (bookworm's python3, 3.11) and imported into the engine: said
loudly at build time, and recorded in the image's labels, which `arena doctor`, every
smoke report and every round's provenance name beside the image's id.
"""

from __future__ import annotations

import hashlib
import io
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

NUMPY_VERSION = "2.4.6"
PYTHON_TAG = "cp311"
BASE_IMAGE = "python:3.11-slim"
IMAGE_TAG = f"arena-agent:py3.11-numpy{NUMPY_VERSION}"
STAND_IN_TAG = "arena-base:debian-bookworm"
STAND_IN_SUITE = "bookworm"
AGENT_UID = 10001
SITE = "/arena/site"
# The pinned wheels, by `platform.machine()`: (file name, sha256 of the file).
NUMPY_WHEELS = {
    "x86_64": (
        "numpy-2.4.6-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
        "89cd468399cfd2504718f0ba50e410dca55a170b61a02ad92bb18c8a65186e93",
    ),
    "aarch64": (
        "numpy-2.4.6-cp311-cp311-manylinux_2_27_aarch64.manylinux_2_28_aarch64.whl",
        "0ab0a9c4ffb1a6d95ef519fe4247dba8eb6b18ad93999f76b7f657039acabd47",
    ),
}
LABEL_BASE = "org.arena.base"
LABEL_BASE_ID = "org.arena.base-id"
LABEL_STAND_IN = "org.arena.base-stand-in"
LABEL_NUMPY = "org.arena.numpy"

Log = Callable[[str], None]


class ImageError(RuntimeError):
    """The image cannot be built here; the message says what is missing and what to do."""


@dataclass(frozen=True)
class ImageRecord:
    """Which image agents ran in: its tag, its id (a content digest) and its base."""

    tag: str
    id: str
    base: str
    stand_in: bool

    def to_dict(self) -> dict:
        return {"tag": self.tag, "id": self.id, "base": self.base, "stand_in": self.stand_in}

    def describe(self) -> str:
        note = " (a STAND-IN for python:3.11-slim, built from Debian's packages)" if self.stand_in else ""
        return f"{self.tag} {self.id[:19]} on {self.base}{note}"


def record_of(image) -> ImageRecord:
    """The record of a docker SDK image built by `build`; an image without the arena's
    labels (built some other way) is named as such."""
    labels = image.labels or {}
    tags = image.tags or [image.id]
    return ImageRecord(
        tag=tags[0],
        id=image.id,
        base=labels.get(LABEL_BASE, "unknown (not built by arena image build)"),
        stand_in=labels.get(LABEL_STAND_IN) == "true",
    )


def cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "arena"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def numpy_wheel(log: Log) -> Path:
    """The pinned numpy wheel for this machine, fetched on the host once and checked by sha256."""
    machine = platform.machine()
    if machine not in NUMPY_WHEELS:
        raise ImageError(f"no numpy wheel is pinned for {machine!r} (pinned: {', '.join(NUMPY_WHEELS)})")
    name, sha = NUMPY_WHEELS[machine]
    path = cache_dir() / "wheels" / name
    if path.is_file() and _sha256(path) == sha:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    log(f"fetching {name} on the host (pip download)")
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            "3.11",
            "--implementation",
            "cp",
            "--abi",
            PYTHON_TAG,
            "--platform",
            f"manylinux_2_28_{machine}",
            "-d",
            tmp,
            f"numpy=={NUMPY_VERSION}",
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        got = Path(tmp) / name
        if proc.returncode != 0 or not got.is_file():
            raise ImageError(f"cannot fetch {name}: {(proc.stderr or proc.stdout).strip()[-400:]}")
        actual = _sha256(got)
        if actual != sha:
            raise ImageError(f"{name} has sha256 {actual}, not the pinned {sha}: refusing it")
        os.replace(got, path)
    return path


def dockerfile(base: str, wheel: str, base_label: str, base_id: str, stand_in: bool) -> str:
    """The image's Dockerfile: the wheel unpacked into SITE and checked, an unprivileged user."""
    check = (
        f"import sys; sys.path.insert(0, '{SITE}'); import numpy; "
        f"assert numpy.__version__ == '{NUMPY_VERSION}', numpy.__version__"
    )
    return f"""\
FROM {base}
COPY {wheel} /tmp/{wheel}
RUN python3 -I -S -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall('{SITE}')" /tmp/{wheel} \\
 && rm /tmp/{wheel} \\
 && python3 -I -S -c "{check}" \\
 && echo 'agent:x:{AGENT_UID}:{AGENT_UID}:agent:/tmp:/usr/sbin/nologin' >> /etc/passwd
LABEL {LABEL_BASE}="{base_label}" {LABEL_BASE_ID}="{base_id}" {LABEL_STAND_IN}="{str(stand_in).lower()}" \\
      {LABEL_NUMPY}="{NUMPY_VERSION}"
USER {AGENT_UID}:{AGENT_UID}
"""


def _pull_base(client, log: Log):
    """python:3.11-slim from its registry, or None (said) where no registry answers."""
    repository, tag = BASE_IMAGE.split(":")
    try:
        return client.images.pull(repository, tag=tag)
    except Exception as exc:
        log(f"cannot pull {BASE_IMAGE}: {str(exc).strip()[:300]}")
        return None


def _stand_in_base(client, log: Log):
    """The Debian stand-in base, imported once into the engine (mmdebstrap, about a minute)."""
    try:
        return client.images.get(STAND_IN_TAG)
    except Exception:
        pass  # not built yet: build it below
    mmdebstrap = shutil.which("mmdebstrap")
    if mmdebstrap is None:
        raise ImageError(
            f"{BASE_IMAGE} cannot be pulled and mmdebstrap is not installed to build a stand-in "
            "(Debian: apt install mmdebstrap; here: scripts/system-deps.sh)"
        )
    if os.geteuid() != 0:
        raise ImageError(f"{BASE_IMAGE} cannot be pulled, and building the Debian stand-in needs root")
    with tempfile.TemporaryDirectory() as tmp:
        tarball = Path(tmp) / "base.tar"
        log(f"building the stand-in base with mmdebstrap ({STAND_IN_SUITE}, python3 from Debian's packages)")
        proc = subprocess.run(
            [mmdebstrap, "--quiet", "--variant=minbase", "--include=python3", STAND_IN_SUITE, str(tarball)],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise ImageError(f"mmdebstrap failed: {proc.stderr.strip()[-400:]}")
        repository, tag = STAND_IN_TAG.split(":")
        client.api.import_image_from_file(
            str(tarball),
            repository=repository,
            tag=tag,
            changes=["ENV PATH=/usr/local/bin:/usr/bin:/bin", "ENV LANG=C.UTF-8"],
        )
    return client.images.get(STAND_IN_TAG)


def _context(dockerfile_text: str, wheel: Path) -> io.BytesIO:
    """The build context: the Dockerfile and the wheel, as a tar (nothing else of the host)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        data = dockerfile_text.encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        tar.add(str(wheel), arcname=wheel.name)
    buf.seek(0)
    return buf


def build(client, tag: str = IMAGE_TAG, log: Log = print) -> ImageRecord:
    """Build the agents' image with no network inside the build; its record."""
    wheel = numpy_wheel(log)
    base = _pull_base(client, log)
    if base is not None:
        base_ref, base_label, stand_in = BASE_IMAGE, BASE_IMAGE, False
    else:
        log(
            f"WARNING: {BASE_IMAGE} is not available here: building on a STAND-IN base from Debian's "
            f"packages ({STAND_IN_TAG}); the image's labels, `arena doctor`, smoke reports and round "
            "provenance will say so"
        )
        base = _stand_in_base(client, log)
        base_ref, stand_in = STAND_IN_TAG, True
        base_label = f"{STAND_IN_TAG} (mmdebstrap {STAND_IN_SUITE}, stand-in for {BASE_IMAGE})"
    text = dockerfile(base_ref, wheel.name, base_label, base.id, stand_in)
    try:
        image, stream = client.images.build(
            fileobj=_context(text, wheel),
            custom_context=True,
            tag=tag,
            rm=True,
            forcerm=True,
            pull=False,
            network_mode="none",
            labels={"arena.role": "agent-image"},
        )
    except Exception as exc:
        raise ImageError(f"the build failed: {str(exc).strip()[-600:]}") from exc
    for chunk in stream:
        line = chunk.get("stream", "").rstrip() if isinstance(chunk, dict) else ""
        if line:
            log(line)
    return record_of(client.images.get(tag))
