"""arena doctor: which sandbox protections are active on this host.

Runs the backend's probe (its row in grader.sandbox.SANDBOXES) inside the sandbox,
exactly as agents are run, and prints each protection as ok / MISSING. Exits 2 (the host
failed, not an input) naming the missing required ones; `require_protections()` is the same
check for the round runner, which must refuse a scored round on a host that fails it.
"""

from __future__ import annotations

import argparse
import sys

from grader.cli.main import ARENA_FAILED
from grader.common.limits import DEFAULT_LIMITS, Limits
from grader.sandbox import ISOLATING, backend
from grader.sandbox.probe import Check


class ProtectionError(RuntimeError):
    """A required protection is missing; the message names every one."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doctor", help="show the sandbox protections active on this host", description=__doc__)
    p.add_argument("--sandbox", choices=ISOLATING, default="local", help="backend to check (default local)")
    p.set_defaults(func=run)


def checks_for(sandbox_name: str = "local", limits: Limits = DEFAULT_LIMITS) -> list[Check]:
    """Every protection of the named backend, checked on this host."""
    return backend(sandbox_name).protections(limits)


def missing_required(checks: list[Check]) -> list[Check]:
    return [c for c in checks if c.required and not c.ok]


def require_protections(sandbox_name: str = "local", limits: Limits = DEFAULT_LIMITS) -> list[Check]:
    """Return the checks if every required protection is active; else raise ProtectionError naming the missing."""
    checks = checks_for(sandbox_name, limits)
    missing = missing_required(checks)
    if missing:
        raise ProtectionError(
            "refusing a scored round: missing " + "; ".join(f"{c.name} ({c.detail})" for c in missing)
        )
    return checks


def run(args: argparse.Namespace) -> int:
    checks = checks_for(args.sandbox)
    print(f"arena doctor: {args.sandbox} sandbox on this host")
    width = max(len(c.name) for c in checks)
    for c in checks:
        mark = "ok" if c.ok else ("MISSING" if c.required else "off")
        print(f"  {mark:8} {c.name:<{width}}  {c.detail}{'' if c.required else '  (optional)'}")
    missing = missing_required(checks)
    if missing:
        print(
            f"arena doctor: missing required protection(s): {', '.join(c.name for c in missing)}; "
            "scored rounds will refuse to run here",
            file=sys.stderr,
        )
        return ARENA_FAILED  # the host, not any input
    print("arena doctor: every required protection is active")
    return 0
