"""Build the fixture site and compare it with (or regenerate) the committed goldens.

    python -m tests.site.goldens --update     regenerate tests/site/golden/ (review the diff)
    python -m tests.site.goldens              compare; exit 1 and name the files that differ

Two builds of the same fixture rounds: `running` (the final pending review) and `ended` (the
final published, the competition ended, replays open). The golden trees hold every page but
`data/` (byte copies of the fixture rounds, checked in the tests) and, of the replays, the
index and the first game of each round (the other games are checked for what they must and
must not show, without committing a page per game).
"""

from __future__ import annotations

import argparse
import difflib
import shutil
import sys
import tempfile
from pathlib import Path

from grader.site import build

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
GOLDEN = HERE / "golden"
STATES = ("running", "ended")
DATA_COMMIT = "0123456789abcdef0123456789abcdef01234567"


def build_fixture_site(state: str, out: Path, cache: Path | None = None, docs: Path | None = None):
    """Build the fixture site in `state` into `out` (docs from fixtures/docs, stable for goldens)."""
    return build(
        FIXTURES / "rounds",
        out,
        docs_dir=docs or FIXTURES / "docs",
        accounts=FIXTURES / "accounts.yaml",
        config=FIXTURES / f"site-{state}.yaml",
        cache_dir=cache,
        data_commit=DATA_COMMIT,
        validate=True,
        log=lambda message: None,
    )


def in_golden(rel: str) -> bool:
    parts = rel.split("/")
    if parts[0] == "data":
        return False
    if parts[0] == "replays":
        return parts[-1] in ("index.html", "g0001.html")
    return True


def tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and in_golden(p.relative_to(folder).as_posix())
    }


def compare(state: str, built: Path) -> list[str]:
    """Every difference between a build and the golden of `state`, as short messages."""
    got, want = tree(built), tree(GOLDEN / state)
    problems = [f"{state}/{rel}: not in the golden" for rel in sorted(set(got) - set(want))]
    problems += [f"{state}/{rel}: missing from the build" for rel in sorted(set(want) - set(got))]
    for rel in sorted(set(got) & set(want)):
        if got[rel] != want[rel]:
            diff = difflib.unified_diff(
                want[rel].decode(errors="replace").splitlines(),
                got[rel].decode(errors="replace").splitlines(),
                lineterm="",
                n=1,
            )
            problems.append(f"{state}/{rel} differs:\n" + "\n".join(list(diff)[:12]))
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true", help="rewrite the goldens from this build")
    args = parser.parse_args(argv)
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        for state in STATES:
            out = Path(tmp) / state
            build_fixture_site(state, out)
            if args.update:
                shutil.rmtree(GOLDEN / state, ignore_errors=True)
                for rel, blob in tree(out).items():
                    (GOLDEN / state / rel).parent.mkdir(parents=True, exist_ok=True)
                    (GOLDEN / state / rel).write_bytes(blob)
                print(f"goldens: {state}: {len(tree(out))} files written", file=sys.stderr)
            else:
                problems += compare(state, out)
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
