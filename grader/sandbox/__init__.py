"""Sandboxes for agents: one interface (`base.Sandbox`) and one table of backends.

`SANDBOXES` maps each name to its backend: how to build it, what `arena doctor` checks of
it, what the kit says of it, and whether rounds may use it. `local` (bubblewrap, the
default) and `docker` (the docker SDK) are the sandboxes; `unsafe` (a plain subprocess)
runs only when asked for by name. The commands' `--sandbox` choices, the doctor and the kit
take their names from here. `get_sandbox(name)` builds one.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from grader.common.limits import DEFAULT_LIMITS, Limits
from grader.sandbox.base import LaunchError, Network, Sandbox, SandboxProcess

if TYPE_CHECKING:
    from grader.sandbox.probe import Check


@dataclass(frozen=True)
class Backend:
    """A sandbox backend: where its class is, the probe that checks its protections (None
    for one that has none), whether rounds and the gate may run agents in it, and the
    sentence the kit shows for it."""

    name: str
    target: str  # "module:Class"
    checks: str | None  # "module:function(sandbox, limits) -> list[Check]"
    isolates: bool
    summary: str

    def build(self, **options: Any) -> Sandbox:
        """A new sandbox of this backend."""
        sandbox: Sandbox = _resolve(self.target)(**options)
        return sandbox

    def protections(self, limits: Limits = DEFAULT_LIMITS) -> list[Check]:
        """Every protection of this backend, checked on this host (what `arena doctor` prints)."""
        if self.checks is None:
            raise SandboxNameError(self.name, f"the {self.name} backend has no protections to check")
        checks: list[Check] = _resolve(self.checks)(self.build(), limits)
        return checks


def _resolve(target: str) -> Any:
    # Imported on use: the docker SDK and bubblewrap helpers load only for the backend asked for.
    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)


SANDBOXES: dict[str, Backend] = {
    "local": Backend(
        "local",
        "grader.sandbox.local:LocalSandbox",
        "grader.sandbox.probe:local_checks",
        True,
        "bubblewrap, the arena's own sandbox (no network, host hidden, private /tmp)",
    ),
    "docker": Backend(
        "docker",
        "grader.sandbox.docker:DockerSandbox",
        "grader.sandbox.probe:docker_checks",
        True,
        "the grader's own image, as on the server",
    ),
    "unsafe": Backend(
        "unsafe",
        "grader.sandbox.unsafe:UnsafeSandbox",
        None,
        False,
        "no sandbox: a plain process of yours, without isolation",
    ),
}
BACKENDS = tuple(SANDBOXES)  # every name `get_sandbox` takes
ISOLATING = tuple(name for name, b in SANDBOXES.items() if b.isolates)  # the --sandbox of rounds and gates


class SandboxNameError(ValueError):
    """A sandbox name that is not in the table (or asks for what its backend lacks); `name` is it."""

    def __init__(self, name: object, message: str):
        super().__init__(message)
        self.name = name


def backend(name: str) -> Backend:
    """The table's row for `name`."""
    try:
        return SANDBOXES[name]
    except KeyError:
        raise SandboxNameError(name, f"unknown sandbox {name!r}; choose one of {BACKENDS}") from None


def get_sandbox(name: str, **options: Any) -> Sandbox:
    """The sandbox backend called `name` (one of BACKENDS)."""
    return backend(name).build(**options)


__all__ = [
    "BACKENDS",
    "ISOLATING",
    "SANDBOXES",
    "Backend",
    "LaunchError",
    "Network",
    "Sandbox",
    "SandboxNameError",
    "SandboxProcess",
    "backend",
    "get_sandbox",
]
