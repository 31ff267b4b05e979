"""Who made a sandbox's leftovers: an owner tag, so that a later arena can clean up after a killed one.

A round killed with `kill -9` cannot remove what it made (containers, I/O folders,
cgroups). Each of them carries the tag of the process that made it,
`<boot id>.<pid>.<start time>`: the next arena to start on the host removes what belongs
to an owner that no longer runs, and only that (another arena running beside it keeps
its own). The start time guards against a reused pid, the boot id against a reboot.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path


@functools.cache
def boot_id() -> str:
    """This boot of the host's kernel (shortened), or "noboot" where it cannot be read."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip().replace("-", "")[:12]
    except OSError:
        return "noboot"


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/PID/stat)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2 :].split()[19]


def tag(pid: int | None = None) -> str:
    """The owner tag of `pid` (default: this process)."""
    pid = os.getpid() if pid is None else pid
    return f"{boot_id()}.{pid}.{_start_time(pid) or 0}"


def alive(owner: str) -> bool:
    """Whether the process that `owner` names still runs; a malformed tag is treated as
    alive, so that nothing the arena did not tag is ever removed."""
    parts = owner.split(".")
    if len(parts) != 3 or not parts[1].isdigit():
        return True
    boot, pid, started = parts
    if boot != boot_id():
        return False  # made before the last reboot
    return _start_time(int(pid)) == started


def owner_of(name: str, prefix: str) -> str | None:
    """The owner tag in a leftover's name `<prefix><tag>-<anything>`, or None when the name is
    not one the arena makes (then it is never touched)."""
    if not name.startswith(prefix):
        return None
    tag = name[len(prefix) :].rsplit("-", 1)[0]
    return tag if tag.count(".") == 2 else None


def sweep(folder: Path, prefix: str, remove: Callable[[Path], object]) -> list[str]:
    """Remove (with `remove`) the entries of `folder` named `<prefix><tag>-...` whose owner no
    longer runs; the names removed. Entries of live owners, and names of any other shape, stay."""
    removed: list[str] = []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return removed  # no such folder, or not ours to read: nothing of ours is there
    for entry in entries:
        tag = owner_of(entry.name, prefix)
        if tag is not None and not alive(tag):
            try:
                remove(entry)
                removed.append(entry.name)
            except OSError:
                pass  # busy or gone: the next sweep tries again
    return removed
