"""arena field: the field of a round, taken when the round starts.

Every approved account's submission on main (`submissions/<handle>/`) whose smoke test passes
now (`--smoke SANDBOX`; without it only the format is checked). For the final, once the field
has frozen, accounts and submissions are read from main as it stood at the freeze. Writes the
field document (`--out`) and the `arena round --agents` arguments, one HANDLE=PATH a line
(`--agents-file`); `--copy-to` copies the entrants' folders there (what the shards are given).
In a git checkout everything is read from the commit's blobs, never from the checkout's files
(a submission's `.gitattributes` could have changed those), so `--copy-to` is then required.
Exit 1 when the field is empty or main has no commit before the freeze; 2 when the arena
failed smoke-testing an entrant (its fault, not the entrant's: nobody is dropped for it).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from grader.cli.main import ARENA_FAILED
from grader.common.errors import OptionError
from grader.documents.yaml_io import dump_yaml
from grader.github import workflow
from grader.play.field import ArenaSmokeError, GitError, build_field, commit_at, export_tree, head_commit
from grader.sandbox import ISOLATING, get_sandbox
from grader.season.competition import load_competition


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "field",
        help="take a round's field (approved, active, smoke passing)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--tier", required=True, choices=("public", "ladder", "final"))
    p.add_argument("--repo-dir", type=Path, default=Path("."), help="the clone of main (default .)")
    p.add_argument("--config", type=Path, default=Path("config/competition.yaml"))
    p.add_argument("--smoke", choices=ISOLATING, help="smoke-test every entrant in this sandbox")
    p.add_argument("--copy-to", type=Path, help="copy the entrants' folders here")
    p.add_argument("--out", type=Path, help="write the field document here (default stdout)")
    p.add_argument("--agents-file", type=Path, help="write HANDLE=PATH lines here")
    p.add_argument("--now", help="the time the round starts (ISO 8601; default now)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except ArenaSmokeError as exc:
        print(f"field: {exc}; no field is taken, run the round again", file=sys.stderr)
        return ARENA_FAILED
    except GitError as exc:
        print(f"field: cannot read main at the freeze: {exc}", file=sys.stderr)
        return 1  # mostly the repository's state (no commit before the freeze, no registry in it)


def _run(args: argparse.Namespace) -> int:
    now = workflow.now(args.now)
    competition = load_competition(args.config)
    root, source, frozen_at = args.repo_dir, None, None
    with tempfile.TemporaryDirectory(prefix="arena-field-") as scratch:
        if args.tier == "final" and competition.frozen(now):
            frozen_at = competition.freeze_at
            assert frozen_at is not None  # frozen(now) holds only with a freeze time
            source = commit_at(args.repo_dir, frozen_at)
            print(f"field: read from {source[:12]}, main at the freeze ({frozen_at})", file=sys.stderr)
        else:
            # Every tier's field names the commit its submissions were read at, not the final's only.
            source = head_commit(args.repo_dir)
            if source is None:
                print(
                    f"field: {args.repo_dir} is not a git checkout, so the field has no source_commit "
                    "and its folders are read as they are",
                    file=sys.stderr,
                )
        if source is not None:
            if args.copy_to is None:
                raise OptionError(
                    "--copy-to", None, "a field read from git needs --copy-to (its folders are temporary)"
                )
            root = Path(scratch) / "tree"
            export_tree(args.repo_dir, source, root)
        sandbox = get_sandbox(args.smoke) if args.smoke else None
        field = build_field(
            root,
            args.tier,
            sandbox,
            args.copy_to,
            source_commit=source,
            frozen_at=frozen_at,
            now=now,
            log=lambda line: print(line, file=sys.stderr),
        )
    text = dump_yaml(field.to_dict())
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    if args.agents_file:
        args.agents_file.write_text("".join(a + "\n" for a in field.agents()), encoding="utf-8")
    for item in field.excluded:
        print(f"field: left out {item['handle']}: {item['reason']}", file=sys.stderr)
    workflow.write_outputs({"entrants": len(field.entrants)})
    if not field.entrants:
        print("field: no entrant; there is no round to play", file=sys.stderr)
        return 1
    return 0
