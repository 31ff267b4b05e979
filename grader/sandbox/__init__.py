"""Sandboxes for agents: one interface (`base.Sandbox`), three backends.

`local` (bubblewrap, the default), `docker` (the docker SDK) and `unsafe`
(a plain subprocess, only behind an explicit flag). `get_sandbox(name)` builds one.
"""

from __future__ import annotations

from grader.sandbox.base import LaunchError, Network, Sandbox, SandboxProcess

BACKENDS = ("local", "docker", "unsafe")


def get_sandbox(name: str, **options) -> Sandbox:
    """The sandbox backend called `name` ("local", "docker" or "unsafe")."""
    if name == "local":
        from grader.sandbox.local import LocalSandbox
        return LocalSandbox(**options)
    if name == "docker":
        from grader.sandbox.docker import DockerSandbox
        return DockerSandbox(**options)
    if name == "unsafe":
        from grader.sandbox.unsafe import UnsafeSandbox
        return UnsafeSandbox(**options)
    raise ValueError(f"unknown sandbox {name!r}; choose one of {BACKENDS}")


__all__ = ["BACKENDS", "LaunchError", "Network", "Sandbox", "SandboxProcess", "get_sandbox"]
