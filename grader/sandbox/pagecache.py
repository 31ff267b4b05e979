"""Sessions leave nothing in the page cache for later ones.

Every sandbox reads the same runtime (the interpreter, its standard library, numpy, the shared
libraries and the runner; in docker, the image's files): one session can leave a file of it
in the host's page cache or not, and a later one can time a read of it, a channel of a bit a
file (32 bits were carried from one session to the next that way). So before a sandbox starts,
the cached pages of every shared file it can read are dropped (`posix_fadvise(DONTNEED)`):
each session starts from the disk, whatever earlier ones read. Pages a live process maps or is
writing are not dropped by the kernel: sandboxes that run at the same time still share the
cache (docs/security.md, Known limits).

Cost, measured by `python -m benchmarks isolation`: the files are listed once per process, and
each start opens and advises each of them (some 3,700 files locally, 10,000 in the image), and
then reads back from the disk what the runner imports.
"""

from __future__ import annotations

import functools
import os


@functools.cache
def files_under(roots: tuple[str, ...]) -> tuple[str, ...]:
    """The regular files of `roots` (files, or folders walked without following links)."""
    found: list[str] = []
    for root in roots:
        if os.path.isfile(root):
            found.append(root)
            continue
        for dirpath, _, names in os.walk(root):
            found += [os.path.join(dirpath, name) for name in names]
    return tuple(found)


def evict(files: tuple[str, ...]) -> int:
    """Drop the page cache of `files`; how many were dropped (a file this user may not open,
    or that is gone, is skipped: a link, a device, a folder's own listing are never opened)."""
    dropped = 0
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
    for path in files:
        try:
            fd = os.open(path, flags)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            dropped += 1
        except OSError:
            pass  # not a regular file after all
        finally:
            os.close(fd)
    return dropped
