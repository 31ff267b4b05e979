"""Error classes for bad input that more than one part of the grader raises.

Each is a ValueError (so `arena` exits 1, the input failed, and older callers still catch it)
that carries what was wrong as attributes; the message is the words a user reads.
"""

from __future__ import annotations


class OptionError(ValueError):
    """A command-line option (or the setting it fills) whose value cannot be used:
    `option` names it (e.g. "--envs"), `value` is what was given."""

    def __init__(self, option: str, value: object, message: str):
        super().__init__(message)
        self.option, self.value = option, value


class ShardError(ValueError):
    """A shard folder that `arena merge` cannot join: `folder` is it (None when none was given)."""

    def __init__(self, folder: object, message: str):
        super().__init__(message)
        self.folder = folder


class PlanVersionError(ValueError):
    """A stored round plan of a version this arena does not read: `version` is what it says."""

    def __init__(self, version: object, message: str):
        super().__init__(message)
        self.version = version
