"""arena play SPEC --black A --white B: play one game and print its record as JSON.

A and B are an agent folder (or zip) or a reference opponent name. Agents run
in a fresh sandbox each (the same folder on both sides is one agent holding
both seats). The agents' own output goes to stderr, after the game.
"""

from __future__ import annotations

import argparse
import json
import sys

from engine import OPPONENT_NAMES
from grader.cli.main import ARENA_FAILED, UsageError
from grader.common.limits import DEFAULT_LIMITS
from grader.common.visible import visible
from grader.documents.specs import resolve_spec
from grader.documents.submission import load_submission
from grader.play.agent_handle import AgentHandle
from grader.play.match import env_info, play_game
from grader.sandbox import BACKENDS, get_sandbox


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "play",
        help="play one game between agents or reference opponents",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("spec", metavar="SPEC", help="spec file, or id or name of a public/paper environment")
    p.add_argument("--black", required=True, help=f"agent folder/zip or one of {', '.join(OPPONENT_NAMES)}")
    p.add_argument("--white", required=True, help=f"agent folder/zip or one of {', '.join(OPPONENT_NAMES)}")
    p.add_argument("--seed", type=int, default=0, help="seed of the reference opponents (default 0)")
    p.add_argument("--sandbox", choices=BACKENDS, default="local", help="where agents run (default local)")
    p.add_argument(
        "--allow-unsafe", action="store_true", help="required with --sandbox unsafe: run agents with no sandbox at all"
    )
    p.add_argument("--no-logs", action="store_true", help="do not print the agents' output to stderr")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.sandbox == "unsafe" and not args.allow_unsafe:
        raise UsageError("--sandbox unsafe runs agents with no protection at all; add --allow-unsafe to mean it")
    spec = resolve_spec(args.spec)
    sandbox = None
    handles: dict[str, AgentHandle] = {}
    seats = {}
    try:
        for color, who in (("black", args.black), ("white", args.white)):
            if who in OPPONENT_NAMES:
                seats[color] = who
                continue
            if who not in handles:
                submission = load_submission(who)
                sandbox = sandbox or get_sandbox(args.sandbox)
                print(f"arena play: starting {who} ({args.sandbox} sandbox)", file=sys.stderr)
                handle = AgentHandle.launch(sandbox, submission, DEFAULT_LIMITS)
                handle.prepare(env_info(spec, 0))
                handles[who] = handle
            seats[color] = handles[who]
        record = play_game(spec, seats["black"], seats["white"], args.seed)
        result = record.to_dict()
        result["agents"] = {
            who: {"versions": h.versions, "fault": h.fault.to_dict() if h.fault else None, "stats": h.stats()}
            for who, h in handles.items()
        }
        print(json.dumps(result, indent=1))
        if not args.no_logs:
            for who, handle in handles.items():
                text = handle.stderr_text()
                if text:
                    print(
                        f"--- output of {visible(who)} ---\n{visible(text.rstrip(), keep_lines=True)}\n"
                        f"--- end of output of {visible(who)} ---",
                        file=sys.stderr,
                    )
        arena_faults = [h.fault for h in handles.values() if h.fault and not h.fault.is_agents_fault]
        for fault in arena_faults:
            print(f"arena play: the arena failed, not the agent: {visible(fault)}", file=sys.stderr)
        return ARENA_FAILED if arena_faults else 0
    finally:
        for handle in handles.values():
            handle.close()
