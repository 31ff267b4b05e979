"""Check your agent with the server's own smoke gate, before you open a pull request with it.

    python check.py            (or: make check)
    python check.py --setup    (or: make setup) makes .venv/, compiles the engine, prints what it found
    python check.py --long     (or: make check-long) the gate with a round's checkpoints, 500 self-play games

The first line is the kit version; compare it with the version on the arena's Kit page.
Then the interpreter and numpy your agent runs with here, beside the grader's. Then the
gate the server runs on every pull request (`grader.play.smoke`, installed from this kit's wheel - the
same code, not a copy): your submission is screened, then played on one public environment
per public board shape - prepare, games against the seeded random opponent before and after
self-play with outcomes, freeze, more games - and each phase's mean act() time is printed
beside the board's pace with its margin and judged on its own (as a round judges its
self-play, checkpoint and pairing games); each phase's act() time and output are projected to
a round's session in the largest field a round plays and judged against that session's CPU
share and output cap (which grow with the field), and the peak memory is printed. The run stops at the first board that
refuses the agent and prints the end of what your agent printed there.

What is checked is exactly what `python package.py` would ship: agent.py and the files
beside it, without the kit's own files, hidden folders (.venv) or caches.

Exit status: 0 the gate passes, 1 it fails, 2 the kit could not run (set-up, bad arguments).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path

import kitenv


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="check.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--setup", action="store_true", help="make (or refresh) .venv/ and print the interpreter and numpy")
    p.add_argument(
        "--agent",
        type=Path,
        default=kitenv.KIT_DIR,
        help="the submission to check: a folder with agent.py, or a zip (default: this kit folder)",
    )
    p.add_argument(
        "--sandbox",
        choices=kitenv.SANDBOXES,
        default="auto",
        help="auto (default): bubblewrap where it works, else none; none runs your agent unisolated; "
        "docker runs it in the grader's own image",
    )
    p.add_argument(
        "--long",
        action="store_true",
        help="the longer check (make check-long): 20 games against random at 0, 100 and 500 of 500 "
        "self-play games, and 20 frozen games per board, so your agent's play after learning, and "
        "its pace in each phase, are exercised",
    )
    p.add_argument("--report", type=Path, help="also write the gate's YAML report (what the server posts) to this file")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        data = kitenv.start(__file__, force_setup=args.setup)
    except kitenv.KitSetupError as exc:
        try:
            print(kitenv.version_line(kitenv.manifest()))
        except kitenv.KitSetupError:
            pass
        return kitenv.fail(exc)
    for line in kitenv.runtime_lines(data):
        print(line, flush=True)
    if args.setup:
        warm_up()
        print(f"ready: {kitenv.VENV_DIR.name}/ holds the arena's gate; now run `make check` (or `python check.py`)")
        return 0
    return run_check(args, data)


def warm_up() -> None:
    """Compile the engine for the gate's boards now (cached in .venv), so that the first
    `make check` spends its time on your agent, not on the arena's compiler."""
    from grader.kit.build import warm_up_gate
    from grader.play.smoke import smoke_boards

    print(
        f"compiling the arena's engine for the gate's {len(smoke_boards())} boards (once; every later check "
        "reuses it) ...",
        file=sys.stderr,
        flush=True,
    )
    seconds = warm_up_gate(log=lambda line: print(line, file=sys.stderr, flush=True))
    print(f"  ... compiled in {seconds:.1f} s", file=sys.stderr, flush=True)


def run_check(args: argparse.Namespace, data: dict) -> int:
    # Imported only here: they exist inside .venv, which enter_venv() has just made sure of.
    from grader.documents.submission import SubmissionError, load_submission
    from grader.documents.yaml_io import dump_yaml
    from grader.kit.build import KitError, choose_sandbox, stage_submission, warm_up_engine
    from grader.play.smoke import LONG_SETTINGS, SmokeSettings, run_smoke, smoke_boards

    try:
        sandbox, note = choose_sandbox(args.sandbox)
    except KitError as exc:
        return kitenv.fail(exc)
    print(f"sandbox: {note}", flush=True)
    source = args.agent.resolve()
    if not source.exists():
        return kitenv.fail(FileNotFoundError(f"{args.agent}: no such file or folder"))
    boards = smoke_boards()
    print(
        f"readying the arena's engine for {len(boards)} boards (compiled by `make setup`; "
        "a minute or two only when it was not) ...",
        file=sys.stderr,
        flush=True,
    )
    seconds = warm_up_engine(boards, log=lambda line: print(line, file=sys.stderr, flush=True))
    print(f"  ... ready in {seconds:.1f} s", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(prefix="arena-check-") as tmp:
        if source.is_dir():
            target = Path(tmp, "submission")
            try:
                files = stage_submission(source, target, kitenv.excludes(source, data))
            except KitError as exc:
                return kitenv.fail(exc)
            print(f"submission: {', '.join(files)}", flush=True)
        else:
            # Unpacked by the server's loader here, so its folder goes when the check ends; a zip
            # the loader refuses goes to the gate as it is, which reports the refusal as the server does.
            try:
                target = load_submission(source, extract_to=Path(tmp, "submission")).path
            except SubmissionError:
                target = source
            print(f"submission: {source.name}", flush=True)
        # On the server the submission's folder is read-only: so it is here, and anything the
        # agent still manages to write there (as root, or on a system that ignores the modes)
        # fails the check as the server's write would.
        before = folder_state(target) if target.is_dir() else None
        if before is not None:
            make_read_only(target)
        shapes = ", ".join(f"{b.layout.rows}x{b.layout.cols}" for b in boards)
        settings = LONG_SETTINGS if args.long else SmokeSettings()
        what = (
            "the long check (the server's gate with a round's checkpoints and more self-play)"
            if args.long
            else "the server's smoke gate"
        )
        print(f"{what}, one public environment per board shape ({shapes}): {settings.describe()}", flush=True)
        started = time.monotonic()
        report = run_smoke(
            target,
            sandbox,
            settings,
            kit_version=data["version"],
            log=lambda line: print(f"  {line}", file=sys.stderr, flush=True),
        )
        if before is not None:
            written = changed_files(before, folder_state(target))
            if written and report.result != "arena_error":
                report = dataclasses.replace(
                    report,
                    result="fail",
                    reason=(
                        f"your agent wrote beside agent.py ({', '.join(written[:5])}): on the server the "
                        "submission's folder is read-only and that write fails. Write to a temporary folder "
                        "(Python's tempfile) or keep it in memory"
                    ),
                )
    print_report(report, time.monotonic() - started)
    if args.report:
        args.report.write_text(dump_yaml(report.to_dict()), encoding="utf-8")
        print(f"report: {args.report}")
    remember(report, data, "make check-long" if args.long else "make check")  # package.py honours the latest
    return 0 if report.passed else 1


NOT_COVERED = (
    "not covered by this check: your win rate, play over the whole 2,000-game budget (the gate plays "
    "a few games; `make check-long` plays 500 self-play games per board), memory growth over a long "
    "session, and the grader's own machine's speed: `make play` runs a small round"
)


def print_report(report, seconds: float) -> None:
    """The gate's answer: each board's phases with their mean act() beside the pace and the
    margin a round needs, the output a round would print, then a verdict; on a failure, the
    end of what the agent printed there."""
    from grader.common.limits import DEFAULT_LIMITS, MIB
    from grader.common.visible import visible  # the agent's text is shown, never obeyed (an ESC, a U+202E)
    from grader.play.smoke import ROUND_MARGIN

    if report.digest:
        print(f"digest: {report.digest}")
    if report.interpreter:
        print(f"your agent ran with Python {visible(report.interpreter)} and numpy {visible(report.numpy)}")
    for note in report.notes:
        print(f"note: {visible(note)}")
    rows = [("board", "environment", "phase", "games", "acts", "mean act", "pace", "margin", "result")]
    for b in report.boards:
        phases = list(b.phases.items()) or [(None, None)]
        for i, (name, phase) in enumerate(phases):
            first = i == 0
            mean = "-" if phase is None or phase.mean_act_ms is None else f"{phase.mean_act_ms:.3f} ms"
            margin = None if phase is None else phase.margin(b.pace_ms)
            rows.append(
                (
                    b.shape if first else "",
                    b.env if first else "",
                    name or "-",
                    "-" if phase is None else str(phase.games),
                    "-" if phase is None else str(phase.acts),
                    mean,
                    f"{b.pace_ms:.1f} ms",
                    "-" if margin is None else f"{margin:.0%}",
                    b.result if first else "",
                )
            )
    if report.boards:
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for r in rows:
            print("  " + "  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
        print(
            f"margin: how far each phase's mean act() is under its pace. The grader judges each phase of an "
            f"environment on its own mean, and a scored round needs a margin of {ROUND_MARGIN:.0%} here: its "
            "runner times every call from the frame sent to the reply read, on a machine shared with other agents"
        )
        tight = [
            f"{b.shape} {name} ({b.phases[name].margin(b.pace_ms):.0%})"
            for b in report.boards
            for name in b.tight_phases()
        ]
        if tight:
            print(
                f"TIGHT: under the pace but inside that margin: {', '.join(tight)}; a round on a busy runner can "
                "fault it (timeout): spend less per move"
            )
        played = [b for b in report.boards if b.round_output_bytes is not None]
        if played:
            field = played[0].round_field
            print(
                f"projected to a round's session in a field of {field} entrants (the largest a round plays; the "
                "CPU share and the output cap grow with the field's pairings):"
            )
            timed = [b for b in played if b.round_act_seconds is not None]
            if timed:
                worst = max(timed, key=lambda b: b.round_act_seconds / b.round_cpu_share)
                print(
                    f"  act() time: up to {worst.round_act_seconds:,.0f} s ({worst.shape}), against that session's "
                    f"CPU share of {worst.round_cpu_share:,.0f} s"
                )
            worst = max(played, key=lambda b: b.round_output_bytes / b.round_output_cap)
            print(
                f"  output: your agent printed {sum(b.output_bytes for b in report.boards):,} bytes in this check; "
                f"at that rate a round's session prints up to {worst.round_output_bytes / MIB:,.2f} MiB "
                f"({worst.shape}), against that session's {worst.round_output_cap / MIB:,.1f} MiB output cap"
            )
        if report.memory_peak_bytes is not None:
            print(
                f"memory: peak {report.memory_peak_bytes / MIB:,.0f} MiB resident (of the "
                f"{DEFAULT_LIMITS.memory_bytes // MIB} MiB limit); a round keeps every entrant's frozen agent alive "
                "together, so the round's capacity plan adds these up"
            )
    for flag in report.flags:
        print(f"needs staff review: {visible(flag.describe())}")
    if report.flags:
        print("  (flags do not fail the gate, but the submission cannot be activated until staff have read it)")
    if report.passed:
        print(NOT_COVERED)
        print(f"PASS: every public board shape, every phase's mean act() under its pace ({seconds:.1f} s)")
        return
    first = report.first_failure
    if first is None:  # refused before any board: the loader's answer
        print(f"FAIL: {visible(report.reason)}")
        return
    print(f"FAIL on the {first.shape} board ({first.env}): {visible(first.reason)}")
    from grader.common.faults import FaultKind

    if first.fault and not FaultKind.parse(first.fault["kind"]).is_agents_fault:
        print(
            "  this is the arena failing to start or run your agent on this machine, not your agent: "
            "try `python check.py --sandbox none`, and tell staff with this output if it persists"
        )
    if first.illegal_moves:
        print(f"  illegal moves on this board: {first.illegal_moves}")
    print(
        "--- what your agent printed on that board (print() and stderr, kept off the protocol channel; last lines) ---"
    )
    print(visible(report.stderr_tail, keep_lines=True) or "(nothing)")
    print("--- end ---")


def folder_state(folder: Path) -> dict[str, tuple[int, int]]:
    """{relative path: (size, modification time in ns)} of every file and folder under `folder`."""
    out = {}
    for path in folder.rglob("*"):
        try:
            st = path.lstat()
        except OSError:
            continue
        out[path.relative_to(folder).as_posix()] = (st.st_size if path.is_file() else -1, st.st_mtime_ns)
    return out


def make_read_only(folder: Path) -> None:
    """Files 0444 and folders 0555, as the server mounts a submission."""
    for path in sorted(folder.rglob("*"), reverse=True):
        path.chmod(0o555 if path.is_dir() else 0o444)
    folder.chmod(0o555)


def changed_files(before: dict, after: dict) -> list[str]:
    """The paths created, changed or removed between two `folder_state`s."""
    return sorted({k for k in after if before.get(k) != after[k]} | {k for k in before if k not in after})


def remember(report, data: dict, check: str) -> None:
    """Note the verdict of `check` (make check or make check-long) on these exact files by their
    digest, so package.py can tell whether what it zips was checked, and honour the latest
    verdict (every agent checked is remembered, not only the last)."""
    if not report.digest or report.result not in ("pass", "fail"):
        return  # refused before it had a digest, or the arena failed: no verdict on these files
    checks = kitenv.read_checks()
    checks[report.digest] = {
        "version": data["version"],
        "result": report.result,
        "check": check,
        "reason": report.reason,
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    try:
        kitenv.CHECKS.parent.mkdir(parents=True, exist_ok=True)
        kitenv.CHECKS.write_text(json.dumps(checks, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    except OSError:
        pass  # only a convenience for package.py; the check itself has answered


if __name__ == "__main__":
    sys.exit(main())
