"""The kit's own virtual environment: make it, check it, and run the kit's scripts inside it.

Standard library only, because this file runs under whatever `python` the student typed -
possibly not 3.11, possibly with nothing installed - and must still say clearly what to do.
check.py, package.py and play.py call `enter_venv()` first: it makes `.venv/` in the kit
folder if it is missing or was made for another kit version (`python check.py --setup` forces
it), installs the arena's wheel shipped in `wheels/` and the requirements named in kit.json,
then re-runs the script with the `.venv` interpreter. That interpreter is the one the checks
launch your agent with, so the interpreter and numpy lines describe what your agent got.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import venv
from pathlib import Path

KIT_DIR = Path(__file__).resolve().parent
MANIFEST = KIT_DIR / "kit.json"
VENV_DIR = KIT_DIR / ".venv"
STAMP = VENV_DIR / "arena-kit.json"
CHECKS = VENV_DIR / "checks.json"  # every check's verdict by submission digest, for package.py
MIN_PYTHON = (3, 11)  # the arena's wheel needs it; the grader runs 3.11
CHILD_MARK = "ARENA_KIT_IN_VENV"  # set when a script re-runs itself in .venv, to stop a loop
# check.py's and play.py's --sandbox: a copy of grader.kit.build.KIT_SANDBOXES (this file runs before
# the arena is installed), written by the arena's `python -m grader.cli.registries --write`.
# generated: kit-sandboxes
SANDBOXES = ("auto", "local", "docker", "none")
# end generated


class KitSetupError(Exception):
    """The kit cannot run here as it stands; the message says what to do (exit status 2)."""


def manifest() -> dict:
    """kit.json: the version, the grader's runtime row, the requirements and the kit's files."""
    try:
        return json.loads(MANIFEST.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise KitSetupError(
            "kit.json is missing: this folder is not a built kit. Download the kit from the "
            "arena's Kit page (staff build it with `arena kit build`) and unzip it"
        ) from None
    except ValueError as exc:
        raise KitSetupError(f"kit.json is damaged ({exc}): download the kit again") from None


def version_line(data: dict) -> str:
    """The first line of every script's output."""
    return f"kit {data['version']}"


def venv_python() -> Path:
    return VENV_DIR / "bin" / "python"


def in_kit_venv() -> bool:
    """True when this interpreter is the kit's .venv."""
    try:
        return Path(sys.prefix).resolve() == VENV_DIR.resolve()
    except OSError:
        return False


def check_platform(data: dict | None = None) -> None:
    """Refuse, with the way out, what the arena's runner and wheel cannot run on."""
    if os.name == "nt":
        raise KitSetupError(
            "the arena's runner needs a POSIX system (Linux or macOS). On Windows, use WSL: "
            "install Ubuntu from the Microsoft Store, unzip the kit there and run "
            "`python3 check.py --setup` in it"
        )
    if sys.version_info[:2] < MIN_PYTHON:
        grader_python = data["runtime"]["python"] if data else f"{MIN_PYTHON[0]}.{MIN_PYTHON[1]}"
        raise KitSetupError(
            f"this is Python {platform.python_version()}, and the kit needs Python {MIN_PYTHON[0]}.{MIN_PYTHON[1]} "
            f"or newer (the grader runs Python {grader_python}). Install Python 3.11 (python.org, pyenv, or your "
            "package manager, e.g. `sudo apt install python3.11 python3.11-venv`) and run "
            "`python3.11 check.py --setup`; with make: `make setup PYTHON=python3.11`"
        )


def stamp_version() -> str | None:
    """The kit version the .venv was set up for, or None when there is no usable .venv."""
    if not venv_python().exists():
        return None
    try:
        return json.loads(STAMP.read_text(encoding="utf-8"))["version"]
    except (OSError, ValueError, KeyError):
        return None


def _run(argv: list, what: str) -> None:
    """Run a set-up step with its output on stderr (stdout is the scripts' data)."""
    print(f"kit setup: {what}", file=sys.stderr, flush=True)
    proc = subprocess.run([str(a) for a in argv], stdout=sys.stderr, stderr=sys.stderr)
    if proc.returncode != 0:
        raise KitSetupError(
            f"{what} failed (exit {proc.returncode}); the lines above say why. Without network, "
            "pip needs the packages in its cache; behind a proxy, set HTTPS_PROXY"
        )


def setup(data: dict) -> None:
    """Make (or refresh) .venv and install the arena's wheel and the requirements into it."""
    check_platform(data)
    if not venv_python().exists():
        print(
            f"kit setup: creating {VENV_DIR.name}/ with Python {platform.python_version()} ({sys.executable})",
            file=sys.stderr,
            flush=True,
        )
        try:
            venv.EnvBuilder(with_pip=True, clear=VENV_DIR.exists()).create(str(VENV_DIR))
        except (subprocess.CalledProcessError, OSError) as exc:
            minor = f"{sys.version_info[0]}.{sys.version_info[1]}"
            raise KitSetupError(
                f"could not create {VENV_DIR.name}/ ({exc}). On Debian/Ubuntu the venv module is "
                f"a package of its own: `sudo apt install python{minor}-venv`"
            ) from None
    py = venv_python()
    wheel = KIT_DIR / data["wheel"]
    if not wheel.is_file():
        raise KitSetupError(f"{data['wheel']} is missing from the kit: download the kit again")
    _run(
        [py, "-m", "pip", "install", "--disable-pip-version-check", "--quiet", *data["requirements"]],
        f"installing {', '.join(data['requirements'])}",
    )
    # --force-reinstall: a new kit ships the same project version with new code, which pip would
    # otherwise call "already satisfied". --no-deps: the requirements above are what the gate
    # needs; the project's server-only dependencies (site, docker SDK, GitHub) are not.
    _run(
        [py, "-m", "pip", "install", "--disable-pip-version-check", "--quiet", "--no-deps", "--force-reinstall", wheel],
        f"installing the arena's gate ({wheel.name})",
    )
    STAMP.write_text(json.dumps({"version": data["version"]}) + "\n", encoding="utf-8")


def enter_venv(script: str, force_setup: bool = False) -> dict:
    """Return kit.json once running inside an up-to-date .venv; otherwise set the .venv up as
    needed and re-run `script` (with this process's arguments) in it: the call then never returns."""
    data = manifest()
    check_platform(data)
    stale = stamp_version() != data["version"]
    force_setup = force_setup and not os.environ.get(CHILD_MARK)  # the parent has just done it
    if force_setup or stale:
        if stale and not force_setup:
            print(
                f"kit setup: {VENV_DIR.name}/ is missing or was made for another kit; setting it up "
                "(what `python check.py --setup` does)",
                file=sys.stderr,
                flush=True,
            )
        setup(data)
    if in_kit_venv():
        return data
    if os.environ.get(CHILD_MARK):
        raise KitSetupError(
            f"{venv_python()} does not run as the kit's .venv; delete the .venv folder and run "
            "`python check.py --setup`"
        )
    sys.stdout.flush()
    sys.stderr.flush()
    os.environ[CHILD_MARK] = "1"
    py = str(venv_python())
    os.execv(py, [py, str(Path(script).resolve()), *sys.argv[1:]])
    raise AssertionError("unreachable: os.execv returns only by raising")


def start(script: str, force_setup: bool = False) -> dict:
    """What every script does first: `enter_venv`, then the version line; kit.json."""
    data = enter_venv(script, force_setup)
    print(version_line(data), flush=True)
    return data


def excludes(folder: Path, data: dict) -> list[str]:
    """What of `folder` a submission leaves out: the kit's own files when it is this kit folder."""
    from grader.kit.build import kit_excludes  # inside .venv, where the arena is installed

    return kit_excludes(folder, data if folder == KIT_DIR else None)


def runtime_lines(data: dict) -> list[str]:
    """The interpreter and numpy lines: what this kit runs your agent with, beside the grader's."""
    import numpy  # inside .venv: the very numpy the agent imports in the local checks

    runtime = data["runtime"]
    ours = f"{sys.version_info[0]}.{sys.version_info[1]}"
    base = getattr(sys, "_base_executable", sys.executable)
    interpreter = (
        f"interpreter: Python {platform.python_version()} ({platform.python_implementation()}, "
        f"{VENV_DIR.name}/ made from {base}); "
        f"the grader runs Python {runtime['python']} ({runtime['image']})"
    )
    if ours != runtime["python"]:
        interpreter += " - a different minor version: keep to what both have"
    numpy_line = f"numpy: {numpy.__version__}; the grader pins numpy {runtime['numpy']}"
    if numpy.__version__ != runtime["numpy"]:
        numpy_line += " - a different version: keep to what both have"
    return [interpreter, numpy_line]


def read_checks() -> dict:
    """check.py's verdicts by submission digest ({} when none is remembered or the file is damaged)."""
    try:
        checks = json.loads(CHECKS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return checks if isinstance(checks, dict) else {}


def fail(exc: Exception) -> int:
    """Print a problem that stopped the kit before it judged anything; exit status 2."""
    print(f"error: {exc}", file=sys.stderr)
    return 2
