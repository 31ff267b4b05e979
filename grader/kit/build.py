"""The starter kit: building it (`arena kit build`) and the helpers its scripts call.

Staff side. `build_kit` turns the checkout's `kit/` folder into `othello-arena-kit.zip`:

- a wheel of this very project (engine + grader, `pip wheel . --no-deps`), so the kit's
  `check.py` runs the same `grader.play.smoke` gate the server runs, not a copy of it;
- `kit.json`, the manifest the kit's scripts read: the kit version, the runtime row of the
  grader's image (read from `grader.sandbox.image`, never copied by hand), the requirements
  its `.venv` installs (the image's numpy pin plus the gate's own dependencies, with the
  specifiers of pyproject.toml) and the kit's own files, which a submission never ships;
- every file of `kit/` (but `version`), with `{{name}}` fields of README.md rendered from the
  grader's configuration (the runtime row, the pace table, the smoke gate's settings).

The kit version is `YYYY.MM.DD-<hash>`: the hash covers the kit's files, the sources that go
into the wheel, the runtime row and the requirements, so it changes exactly when what a
student downloads changes; the date is kept from the previous `kit/version` while the hash
is the same, so rebuilding an unchanged kit does not tell every student to download again.
The zip is reproducible: fixed timestamps and order, and the wheel is built with a fixed
SOURCE_DATE_EPOCH.

Student side (run inside the kit's `.venv`, where this module arrives with the wheel):
`submission_files` / `stage_submission` / `write_submission_zip` decide what a submission
ships, `choose_sandbox` picks the sandbox the check can have here, `warm_up_engine` compiles
the engine before the gate starts its clocks.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import grader
from grader.common.checkout import source_tree
from grader.common.limits import DEFAULT_LIMITS, size_text
from grader.documents.sealing import MANIFEST_NAME as PACKAGE_MANIFEST
from grader.documents.sealing import PACKAGE_FILES, SEALED_NAME, Manifest, public_key_text, seal, sha256
from grader.sandbox import ISOLATING
from grader.sandbox.image import BASE_IMAGE, IMAGE_TAG, NUMPY_VERSION

MANIFEST_NAME = "kit.json"
MANIFEST_SCHEMA_VERSION = 1
KIT_FOLDER = "othello-arena-kit"  # the one top folder of the zip
KIT_ZIP_NAME = f"{KIT_FOLDER}.zip"
WHEEL_FOLDER = "wheels"
VERSION_FILE = "version"  # written into kit/ by the build; the site serves it, the zip does not carry it
# Files the kit's scripts need; the build refuses a kit/ folder without any of them.
REQUIRED_KIT_FILES = ("agent.py", "README.md", "Makefile", "check.py", "package.py", "play.py", "kitenv.py")
RENDERED_FILES = ("README.md",)
# What `pip wheel` needs of the checkout to build the project (pyproject's packages and readme).
PACKAGE_SOURCES = ("pyproject.toml", "README.md", "engine", "grader")
# Of the project's dependencies, the ones the gate, the rounds and the screening import;
# the rest (site, docker SDK, GitHub) are the server's and would only slow a student's setup.
# pynacl: `make package` seals with it; jsonschema: the gate checks documents (grader/documents/schema.py).
KIT_DEPENDENCIES = ("numba", "pyyaml", "pynacl", "jsonschema")
# Outputs of the kit's scripts: never part of a submission.
KIT_OUTPUTS = ("submission.zip", "submission", "play-results", "replays")  # replays/: `make history` writes them
# 1980-01-01, the earliest time a zip can record: the same content gives the same bytes.
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
SOURCE_DATE_EPOCH = "315532800"
VERSION_RE = re.compile(r"^(\d{4})\.(\d{2})\.(\d{2})-([0-9a-f]{10})$")
FIELD_RE = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")
PIP_TAIL_CHARS = 3000


class KitError(ValueError):
    """The kit cannot be built or used as asked; the message says what to do."""


@dataclass(frozen=True)
class KitBuild:
    """What `build_kit` wrote."""

    zip_path: Path
    version_path: Path
    version: str
    wheel: str
    files: tuple[str, ...]  # paths inside the kit folder, sorted


# ---------------------------------------------------------------------------------------------
# From a package to a pull request: one list of steps, printed by package.py, rendered into
# the kit's README and shown on the site's kit page, so the three cannot disagree.


def repository_url(root: Path) -> str | None:
    """The arena repository's web address, as the site's settings give it (`kit.repository`
    of `<root>/site.yaml`), so the kit and the site's kit page name the same one; None if unset."""
    path = root / "site.yaml"
    if not path.is_file():
        return None
    from grader.documents.yaml_io import DocumentError
    from grader.season.site_settings import load_site_config

    try:
        return load_site_config(path).repository
    except DocumentError as exc:
        raise KitError(f"{path.name}: {exc}") from None


# What the kit says where it would name the repository's address and the kit was built without
# one (`kit.repository: null` in site.yaml): the truth, and who can fix it.
NO_REPOSITORY = (
    "this kit was built without the arena repository's address (`kit.repository` in the arena's "
    "site.yaml is not set): ask your course staff for it"
)


def site_address(repository: str | None) -> str | None:
    """The arena's site (GitHub Pages of its repository: site.yml deploys it there) from the
    repository's address: https://github.com/OWNER/NAME -> https://OWNER.github.io/NAME/; None
    when the repository is unknown or not on github.com."""
    import re

    found = re.fullmatch(r"https://github\.com/([A-Za-z0-9-]+)/([A-Za-z0-9._-]+?)(?:\.git)?/?", repository or "")
    return f"https://{found.group(1).lower()}.github.io/{found.group(2)}/" if found else None


def site_line(repository: str | None) -> str:
    """The sentence that gives the arena's site (or says who knows it)."""
    site = site_address(repository)
    return (
        f"The arena's site: <{site}> (the leaderboard, the rounds, the rules, the environments and the Kit page)."
        if site
        else "The arena's site (the leaderboard, the rounds, the rules and the Kit page): ask your course "
        "staff for its address."
    )


def register_steps(repository: str | None) -> list[str]:
    """How a student gets an account, before the first submission's pull request: a pull request
    that adds their own entry to accounts.yaml, unapproved, keyed by their numeric GitHub id;
    staff approve it (grader.season.accounts, docs/staff.md)."""
    where = repository or "the arena's repository"
    return [
        "Find your numeric GitHub id (accounts are keyed by it, not by your login, so a rename is harmless): open "
        '`https://api.github.com/users/<your login>` and read its "id" (or run `gh api users/<your login> --jq .id`).',
        "Choose a handle: it names your folder `submissions/<handle>/` and never changes (lower case letters, digits "
        "and inner hyphens, at most 32 characters).",
        f"Fork {where} on GitHub, and on a branch of your fork add your own entry under "
        "`accounts:` in `accounts.yaml` (in place of `{}` while there is none), with your id as its key: "
        "`<id>: {login: <your login>, handle: <handle>, approved: false, staff: false}`. Change nothing else.",
        "Open a pull request with that change alone. Its check says whether the entry is well formed (you may add "
        "only your own account, unapproved); staff merge it and approve the account. Until then nothing you submit "
        "is smoke-tested, merged or scored: open your submission's pull request once you are approved.",
    ]


def submit_steps(repository: str | None) -> list[str]:
    """The steps from a checked submission.zip to a pull request, as plain sentences."""
    where = repository or "the arena's repository"
    return [
        "`make check` passes and `make package` says OK for the files you mean to submit.",
        f"Fork {where} on GitHub, clone your fork, and make a branch: `git switch -c submit`.",
        "Copy the two files of the `submission/` folder `make package HANDLE=<your handle>` wrote (manifest.yaml "
        "and submission.sealed, your agent sealed to the arena's key: only you and staff can read it) into "
        "`submissions/<your handle>/` of that clone (your handle is your account's, in accounts.yaml), in place "
        "of what is there: change nothing else.",
        "Commit it, push the branch to your fork, and open a pull request against the arena's `main`.",
        "The smoke test on the pull request runs the gate `make check` ran, in the grader's container, "
        "and comments with its report; staff merge it once it passes and your account is approved.",
    ]


# ---------------------------------------------------------------------------------------------
# The runtime row and the requirements: read from the grader's configuration.


def python_of_image(image: str = BASE_IMAGE) -> str:
    """The Python version of the grader's image, from its tag (`python:3.11-slim` -> "3.11")."""
    match = re.match(r"^python:(\d+\.\d+)", image)
    if match is None:
        raise KitError(f"cannot read a Python version from the grader's image {image!r}")
    return match.group(1)


def runtime_row() -> dict:
    """The grader's runtime, as the kit's README and check.py state it."""
    return {"image": BASE_IMAGE, "python": python_of_image(), "numpy": NUMPY_VERSION, "docker_tag": IMAGE_TAG}


def kit_requirements(pyproject: Path) -> list[str]:
    """The kit's `.venv` requirements: numpy at the image's pin, then the gate's dependencies
    with pyproject.toml's specifiers (so a new lower bound there reaches the kit by itself)."""
    try:
        declared = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"]
    except (OSError, KeyError, tomllib.TOMLDecodeError) as exc:
        raise KitError(f"{pyproject}: cannot read [project] dependencies: {exc}") from None
    by_name = {}
    for requirement in declared:
        name = re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].strip().lower()
        by_name[name] = requirement
    missing = [name for name in KIT_DEPENDENCIES if name not in by_name]
    if missing:
        raise KitError(f"{pyproject}: the kit needs {', '.join(missing)}, which the project does not declare")
    return [f"numpy=={NUMPY_VERSION}"] + [by_name[name] for name in KIT_DEPENDENCIES]


# ---------------------------------------------------------------------------------------------
# Building the kit.


def source_root(start: Path | None = None) -> Path:
    """The checkout to build from: `start`, else the arena's source tree (grader.common.checkout)."""
    # A checkout (or an editable install) holds the package; a `pip install .` made inside a
    # checkout runs from the checkout's folder (grader.common.checkout).
    root = (Path(start) if start else source_tree() or Path(grader.__file__).resolve().parent.parent).resolve()
    missing = [name for name in ("pyproject.toml", "kit", "engine", "grader") if not (root / name).exists()]
    if missing:
        raise KitError(
            f"{root} is not the arena's source tree (no {', '.join(missing)}); "
            "run `arena kit build` from a checkout or give --source"
        )
    return root


def _tree_files(folder: Path) -> list[Path]:
    """Files under `folder`, sorted, without caches, bytecode or hidden entries."""
    out = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        for name in sorted(names):
            if name.startswith(".") or name.endswith((".pyc", ".pyo", ".nbi", ".nbc")):
                continue
            out.append(Path(root, name))
    return out


def kit_source_files(kit_dir: Path) -> list[str]:
    """The kit's own files (relative, sorted): everything in kit/ but the generated `version`."""
    files = [p.relative_to(kit_dir).as_posix() for p in _tree_files(kit_dir)]
    files = [f for f in files if f != VERSION_FILE]
    missing = [f for f in REQUIRED_KIT_FILES if f not in files]
    if missing:
        raise KitError(f"{kit_dir}: the kit needs {', '.join(missing)}")
    clash = [f for f in files if f.split("/")[0] in (MANIFEST_NAME, WHEEL_FOLDER, *KIT_OUTPUTS)]
    if clash:
        raise KitError(f"{kit_dir}: {', '.join(clash)} would be overwritten by the build or the kit's scripts")
    return files


def _copy_package_sources(root: Path, dest: Path) -> list[Path]:
    """Copy what the wheel is built from into `dest` (so the build never writes into the checkout)."""
    copied = []
    for name in PACKAGE_SOURCES:
        src = root / name
        if src.is_file():
            shutil.copy2(src, dest / name)
            copied.append(dest / name)
            continue
        for path in _tree_files(src):
            target = dest / path.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
            copied.append(target)
    return copied


def build_wheel(package_dir: Path, out_dir: Path, python: str = sys.executable) -> Path:
    """`pip wheel . --no-deps` of the project copied to `package_dir`; the wheel's path."""
    env = dict(os.environ, SOURCE_DATE_EPOCH=SOURCE_DATE_EPOCH, PYTHONDONTWRITEBYTECODE="1")
    argv = [python, "-m", "pip", "wheel", str(package_dir), "--no-deps", "--quiet", "--wheel-dir", str(out_dir)]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env)
    wheels = sorted(out_dir.glob("*.whl"))
    if proc.returncode != 0 or len(wheels) != 1:
        detail = (proc.stderr or proc.stdout or "no output").strip()[-PIP_TAIL_CHARS:]
        raise KitError(f"building the arena's wheel failed (pip exit {proc.returncode}):\n{detail}")
    return wheels[0]


def content_hash(
    kit_dir: Path, kit_files: list[str], package_dir: Path, package_files: list[Path], manifest_core: dict
) -> str:
    """sha256 over every input of the kit, in a fixed order; its first 10 hex digits name it."""
    h = hashlib.sha256()

    def add(label: str, data: bytes) -> None:
        h.update(label.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)

    for rel in kit_files:
        add("kit/" + rel, (kit_dir / rel).read_bytes())
    for path in sorted(package_files):
        rel = path.relative_to(package_dir).as_posix()
        if rel == "README.md":  # only the wheel's long description: editing it changes nothing a student runs
            continue
        add("package/" + rel, path.read_bytes())
    add("manifest", json.dumps(manifest_core, sort_keys=True).encode())
    return h.hexdigest()[:10]


def kit_version(digest: str, previous: str | None, today: dt.date) -> str:
    """`YYYY.MM.DD-<digest>`; the previous version is kept while its digest is the same."""
    if previous:
        match = VERSION_RE.match(previous.strip())
        if match and match.group(4) == digest:
            return previous.strip()
    return f"{today:%Y.%m.%d}-{digest}"


def pace_table_markdown() -> str:
    """The pace per public board shape, as the grader enforces it (grader.common.limits)."""
    lines = ["| board | mean act() allowed (pace) |", "|---|---|"]
    lines += [f"| {shape} | {seconds * 1e3:.1f} ms |" for shape, seconds in DEFAULT_LIMITS.pace_table().items()]
    return "\n".join(lines)


def limits_table_markdown() -> str:
    """Every limit the grader enforces (grader.common.limits), as the rules page renders it."""
    lines = ["| limit | value | meaning |", "|---|---|---|"]
    lines += [f"| {name} | {value} | {meaning} |" for name, value, meaning in DEFAULT_LIMITS.rows()]
    return "\n".join(lines)


def render_fields(manifest: dict) -> dict[str, str]:
    """The `{{name}}` fields README.md may use, each from the grader's own configuration."""
    from grader.play.smoke import (
        ROUND_MARGIN,
        SmokeSettings,
        smoke_boards,
    )  # the engine's tiers load only when building

    settings = SmokeSettings()
    runtime = manifest["runtime"]
    shapes = ", ".join(f"{s.layout.rows}x{s.layout.cols}" for s in smoke_boards())
    return {
        "version": manifest["version"],
        "arena_version": manifest["arena_version"],
        "image": runtime["image"],
        "python": runtime["python"],
        "numpy": runtime["numpy"],
        "docker_tag": runtime["docker_tag"],
        "runtime_row": f"`{runtime['image']}` with numpy {runtime['numpy']} pinned, and nothing else",
        "requirements": ", ".join(f"`{r}`" for r in manifest["requirements"]),
        "smoke_boards": shapes,
        "smoke_games": settings.describe(),
        "early_stop_acts": str(settings.early_stop_acts),
        "pace_stop_factor": f"{DEFAULT_LIMITS.pace_stop_factor:g}",
        "pace_min_acts": str(DEFAULT_LIMITS.pace_min_acts),
        "round_margin": f"{ROUND_MARGIN:.0%}",
        "output_cap": f"{size_text(DEFAULT_LIMITS.output_cap_bytes)} (plus {size_text(DEFAULT_LIMITS.output_bytes_per_game)} "
        "a game)",
        "repository": (
            f"<{manifest['repository']}>"
            if manifest.get("repository")
            else NO_REPOSITORY[0].upper() + NO_REPOSITORY[1:] + "."
        ),
        "register_steps": "\n".join(
            f"{n}. {step}" for n, step in enumerate(register_steps(manifest.get("repository")), 1)
        ),
        "site": site_line(manifest.get("repository")),
        "pace_table": pace_table_markdown(),
        "limits_table": limits_table_markdown(),
        "submit_steps": "\n".join(f"{n}. {step}" for n, step in enumerate(submit_steps(manifest.get("repository")), 1)),
    }


def render(text: str, fields: dict[str, str], name: str) -> str:
    """Replace every `{{field}}` of `text`; an unknown field is an error naming it and the file."""
    unknown = sorted({m.group(1) for m in FIELD_RE.finditer(text)} - set(fields))
    if unknown:
        raise KitError(f"kit/{name}: unknown field(s) {', '.join(unknown)} (known: {', '.join(sorted(fields))})")
    return FIELD_RE.sub(lambda m: fields[m.group(1)], text)


def _zip_entry(zf: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
    info.external_attr = 0o100644 << 16  # a regular file, rw-r--r--
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, data)


def build_kit(
    root: Path | None = None,
    out: Path | None = None,
    version_path: Path | None = None,
    today: dt.date | None = None,
    python: str = sys.executable,
    log: Callable[[str], None] | None = None,
) -> KitBuild:
    """Build the kit zip into `out` (default `<root>/build/kit`) and write its version file
    (default `<root>/kit/version`)."""
    log = log or (lambda line: None)
    root = source_root(root)
    kit_dir = root / "kit"
    out = Path(out) if out is not None else root / "build" / "kit"
    version_path = Path(version_path) if version_path is not None else kit_dir / VERSION_FILE
    kit_files = kit_source_files(kit_dir)
    with tempfile.TemporaryDirectory(prefix="arena-kit-") as tmp:
        package_dir, wheel_dir = Path(tmp, "package"), Path(tmp, "wheel")
        package_dir.mkdir()
        wheel_dir.mkdir()
        package_files = _copy_package_sources(root, package_dir)
        log(f"arena kit build: building the arena's wheel from {len(package_files)} files ...")
        wheel = build_wheel(package_dir, wheel_dir, python)
        core = {
            "arena_version": grader.__version__,
            "runtime": runtime_row(),
            "requirements": kit_requirements(root / "pyproject.toml"),
            "wheel": f"{WHEEL_FOLDER}/{wheel.name}",
            "repository": repository_url(root),
        }
        if core["repository"] is None:
            log(
                "arena kit build: warning: site.yaml sets no kit.repository, so the kit cannot give the arena "
                "repository's address and says so where it would (set it, then build again)"
            )
        digest = content_hash(kit_dir, kit_files, package_dir, package_files, core)
        previous = version_path.read_text(encoding="utf-8") if version_path.is_file() else None
        version = kit_version(digest, previous, today or dt.datetime.now(dt.UTC).date())
        contents: dict[str, bytes] = {}
        # The key the kit seals submissions to (grader.documents.sealing): production's public key, or
        # this checkout's own, made on first use. Not in the version's hash: the files are the kit.
        manifest = {
            "schema_version": MANIFEST_SCHEMA_VERSION,
            "version": version,
            **core,
            "submission_key": public_key_text(),
            "files": sorted(kit_files + [MANIFEST_NAME, core["wheel"]]),
        }
        fields = render_fields(manifest)
        for rel in kit_files:
            data = (kit_dir / rel).read_bytes()
            if rel in RENDERED_FILES:
                data = render(data.decode("utf-8"), fields, rel).encode("utf-8")
            contents[rel] = data
        contents[MANIFEST_NAME] = (json.dumps(manifest, indent=1) + "\n").encode()
        contents[core["wheel"]] = wheel.read_bytes()
        out.mkdir(parents=True, exist_ok=True)
        zip_path = out / KIT_ZIP_NAME
        partial = zip_path.with_suffix(".zip.partial")
        with zipfile.ZipFile(partial, "w") as zf:
            for rel in sorted(contents):
                _zip_entry(zf, f"{KIT_FOLDER}/{rel}", contents[rel])
        partial.replace(zip_path)
    version_path.parent.mkdir(parents=True, exist_ok=True)
    if previous is None or previous.strip() != version:
        version_path.write_text(version + "\n", encoding="utf-8")
    log(f"arena kit build: kit {version}, {len(contents)} files, {zip_path.stat().st_size} bytes")
    return KitBuild(zip_path, version_path, version, wheel.name, tuple(sorted(contents)))


# ---------------------------------------------------------------------------------------------
# What a submission ships (package.py, check.py and play.py all use this one rule).


def submission_files(folder: Path, exclude: Iterable[str] = ()) -> list[str]:
    """The files of `folder` a submission ships (relative, sorted).

    Left out: hidden files and folders (.venv, .git, editor files), `__pycache__` and
    bytecode, and the top-level names in `exclude` (in the kit folder: the kit's own files
    and the scripts' outputs), so the zip holds agent.py and what sits beside it.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise KitError(f"{folder}: not a folder")
    skip = set(exclude)
    files = []
    for root, dirs, names in os.walk(folder):
        rel_root = Path(root).relative_to(folder)
        dirs[:] = sorted(
            d for d in dirs if not d.startswith(".") and d != "__pycache__" and (rel_root != Path(".") or d not in skip)
        )
        for name in sorted(names):
            rel = (rel_root / name).as_posix()
            if name.startswith(".") or name.endswith((".pyc", ".pyo")) or rel in skip:
                continue
            files.append(rel)
    if "agent.py" not in files:
        from grader.documents.submission import missing_agent

        raise KitError(f"{folder}: {missing_agent(files)}")
    return sorted(files)


def kit_excludes(folder: Path, manifest: dict | None) -> list[str]:
    """What of `folder` is the kit and not the student's: the manifest's files (but agent.py)
    and the scripts' outputs, when `folder` is the kit folder; nothing otherwise."""
    if manifest is None:
        return []
    files = {f for f in manifest.get("files", []) if f != "agent.py"}
    top = {f.split("/")[0] for f in files}
    return sorted(files | top | set(KIT_OUTPUTS))


def stage_submission(folder: Path, dest: Path, exclude: Iterable[str] = ()) -> list[str]:
    """Copy the files a submission of `folder` ships into the empty folder `dest`; their names."""
    files = submission_files(folder, exclude)
    dest.mkdir(parents=True, exist_ok=True)
    for rel in files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(folder, rel), target)
    return files


def write_sealed_package(
    archive: Path, digest: str, handle: str, kit_version: str, recipient: str, dest: Path, owner_key: str | None = None
) -> Manifest:
    """Seal the checked zip `archive` (whose files' digest is `digest`) to `recipient` into the
    folder `dest`: manifest.yaml and submission.sealed, what the pull request carries."""
    sealed = seal(archive.read_bytes(), recipient)
    manifest = Manifest(handle, kit_version, sha256(sealed), digest, recipient, owner_key)
    if dest.exists():
        for name in PACKAGE_FILES:
            (dest / name).unlink(missing_ok=True)
    dest.mkdir(parents=True, exist_ok=True)
    (dest / SEALED_NAME).write_bytes(sealed)
    (dest / PACKAGE_MANIFEST).write_text(manifest.to_yaml(), encoding="utf-8")
    return manifest


def write_submission_zip(folder: Path, files: list[str], dest: Path) -> Path:
    """`files` of `folder` into the zip `dest`, reproducibly (fixed times, sorted names)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".partial")
    with zipfile.ZipFile(partial, "w") as zf:
        for rel in sorted(files):
            _zip_entry(zf, rel, Path(folder, rel).read_bytes())
    partial.replace(dest)
    return dest


# ---------------------------------------------------------------------------------------------
# Which sandbox the check can have on this machine.

# check.py's and play.py's --sandbox: the sandboxes of grader.sandbox.SANDBOXES that isolate,
# between `auto` (local where it works) and `none` (the unsafe backend). kit/kitenv.py, which
# runs before the arena is installed, carries a copy that tests/kit/test_kit_sandboxes.py holds equal.
KIT_SANDBOXES = ("auto", *ISOLATING, "none")


def choose_sandbox(name: str = "auto"):
    """(sandbox, the sentence check.py prints about it) for `name`: auto, local, docker or none.

    auto is `local` where bubblewrap works and `none` elsewhere. `none` is the arena's
    `unsafe` backend: the agent is a plain process of the student's, and the kit says so.
    """
    from grader.sandbox import SANDBOXES, get_sandbox
    from grader.sandbox.local import bwrap_problem

    if name not in KIT_SANDBOXES:
        raise KitError(f"unknown sandbox {name!r}: choose {', '.join(KIT_SANDBOXES[:-1])} or {KIT_SANDBOXES[-1]}")
    if name in ("auto", "local"):
        problem = bwrap_problem()
        if problem is None:
            return get_sandbox("local"), (
                f"local: {SANDBOXES['local'].summary}; the server runs this gate in the {BASE_IMAGE} container"
            )
        if name == "local":
            raise KitError(f"--sandbox local: {problem}")
        return get_sandbox("unsafe", quiet=True), (
            f"none: {problem}, so your agent runs as a plain process of yours, without isolation. "
            "The boards, the protocol and the pace are the server's own; the isolation is only the server's"
        )
    if name == "none":
        return get_sandbox("unsafe", quiet=True), (
            "none (asked for): your agent runs as a plain process of yours, without isolation. "
            "The boards, the protocol and the pace are the server's own; the isolation is only the server's"
        )
    from grader.sandbox import image
    from grader.sandbox.base import LaunchError
    from grader.sandbox.docker import client

    try:
        c = client()
    except LaunchError as exc:
        raise KitError(
            f"--sandbox docker: {exc}; the SDK goes into the kit's .venv with `.venv/bin/python -m pip install docker`"
        ) from None
    try:
        c.images.get(IMAGE_TAG)
    except Exception:  # docker.errors.ImageNotFound; the SDK is optional, so not named here
        # As the server's workflow does: no image yet, so build it (python:3.11-slim + the pin).
        print(f"building the grader's image {IMAGE_TAG} (once) ...", file=sys.stderr, flush=True)
        try:
            image.build(c, IMAGE_TAG, log=lambda line: print(f"  {line}", file=sys.stderr, flush=True))
        except Exception as exc:
            raise KitError(f"--sandbox docker: building {IMAGE_TAG} failed: {exc}") from None
    return get_sandbox("docker"), f"docker: the grader's own image {IMAGE_TAG}, as on the server"


def warm_up_engine(specs, log: Callable[[str], None] | None = None) -> float:
    """Play one game of reference opponents on each board, so the engine's kernels are
    compiled (and cached) before the gate's clocks start; the seconds it took. `log` gets a
    line per board (what, how far, how long so far): the first time this takes a minute or two."""
    import time

    from grader.play.match import play_game

    started = time.monotonic()
    for number, spec in enumerate(specs, 1):
        play_game(spec, "random", "random", 0)
        if log:
            log(
                f"  board {number}/{len(specs)} ({spec.layout.rows}x{spec.layout.cols}) ready, "
                f"{time.monotonic() - started:.0f} s so far"
            )
    return time.monotonic() - started


def warm_up_gate(log: Callable[[str], None] | None = None) -> float:
    """Compile everything the gate runs, not only the games of reference opponents: the
    engine for each board (`warm_up_engine`), then one short gate of the arena's control agent
    (it plays the first legal cell) as a plain process, so the agent's turn path is compiled
    too; the seconds it took."""
    import time

    from grader.play.smoke import SmokeSettings, run_smoke, smoke_boards
    from grader.rounds.play import CONTROL_AGENT
    from grader.sandbox import get_sandbox

    started = time.monotonic()
    warm_up_engine(smoke_boards(), log)
    if log:
        log(f"  the gate's own path, with the control agent, {time.monotonic() - started:.0f} s so far ...")
    run_smoke(
        CONTROL_AGENT,
        get_sandbox("unsafe", quiet=True),
        SmokeSettings(games_vs_random=1, self_play_games=1, frozen_games=1),
    )
    return time.monotonic() - started
