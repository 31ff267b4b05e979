"""The arena's grader: sandboxes, protocol, sessions, rounds, metrics, results, site, GitHub glue."""

__version__ = "0.1.0"
