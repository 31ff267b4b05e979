"""Every limit the grader enforces on an agent, in one frozen dataclass.

The rules page renders `DEFAULT_LIMITS.rows()`, so the published table and what
the sandbox and the agent handle actually enforce cannot drift apart. Tests and
staff tools derive variants with `dataclasses.replace`.

The limits a session's games consume (the CPU share, the environment's wall ceiling and
the output cap) follow the field: each is a base plus an allowance for every game the
session plays (`for_session`), and a session's games grow with the number of entrants (its
pairings). An agent inside the pace in every phase therefore never meets a total because
the class is large: the CPU allowance per game is the pace times the board's cells, about
the act time of a whole board's moves at the pace (both seats of a self-play game; twice
an agent's own share of a game against another), and the wall allowance twice that, since
the ceiling also runs while the opponent is to move.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

# Board shapes the pace table is published for: the public layouts' shapes and
# the largest generated board.
PACE_SHAPES = ((6, 8), (8, 8), (10, 10), (12, 10), (12, 12))


class LimitsError(ValueError):
    """Limits that cannot hold together; `problems` lists each as `field must ..., got ...`."""

    def __init__(self, problems: list[str]):
        super().__init__("bad limits: " + "; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Limits:
    """Budgets for one agent in one environment session (one fresh sandbox). The CPU share,
    the wall ceiling and the output cap here are the bases; `for_session` gives a session's
    own limits, with its totals in those fields (what the handle and the sandbox enforce)."""

    act_soft_seconds: float = 1.0
    act_hard_seconds: float = 5.0
    pace_seconds_per_cell: float = 0.0001
    pace_min_acts: int = 200
    pace_stop_factor: float = 3.0
    env_wall_seconds: float = 5400.0
    cpu_cores: float = 1.0
    cpu_seconds_per_env: float = 3600.0
    prepare_seconds: float = 30.0
    memory_bytes: int = 1 * GIB
    address_space_bytes: int = 3 * GIB
    pids: int = 64
    open_files: int = 256
    tmpfs_bytes: int = 64 * MIB
    output_cap_bytes: int = 8 * MIB
    log_keep_bytes: int = 64 * KIB
    illegal_moves_per_game: int = 3
    never_legal_attempts: int = 10
    # Each game a session plays adds this many times (the board's pace x its cells) to the
    # session's CPU share, and `wall_paces_per_game` times it to its wall ceiling.
    cpu_paces_per_game: float = 1.0
    wall_paces_per_game: float = 2.0
    output_bytes_per_game: int = 2 * KIB
    # The largest field a round plays: what the smoke test projects a session to.
    largest_field: int = 300

    def __post_init__(self) -> None:
        problems = [f"{name} must be > 0, got {value!r}" for name, value in asdict(self).items() if not value > 0]
        if self.act_hard_seconds < self.act_soft_seconds:
            problems.append(
                f"act_hard_seconds ({self.act_hard_seconds}) must be >= act_soft_seconds ({self.act_soft_seconds})"
            )
        if self.address_space_bytes < self.memory_bytes:
            problems.append("address_space_bytes must be >= memory_bytes")
        if self.log_keep_bytes > self.output_cap_bytes:
            problems.append("log_keep_bytes must be <= output_cap_bytes")
        if problems:
            raise LimitsError(problems)

    def pace_seconds(self, rows: int, cols: int) -> float:
        """Mean act() seconds allowed on a rows x cols board (scales with the cell count)."""
        return self.pace_seconds_per_cell * rows * cols

    def pace_table(self, shapes=PACE_SHAPES) -> dict[str, float]:
        """{"RxC": pace seconds} for the published board shapes."""
        return {f"{r}x{c}": self.pace_seconds(r, c) for r, c in shapes}

    def game_allowance(self, rows: int, cols: int) -> float:
        """The pace times the cells of a rows x cols board: the most act time one game can
        ask of an agent at the pace (both seats of a self-play game together)."""
        return self.pace_seconds(rows, cols) * rows * cols

    def for_session(self, rows: int, cols: int, games: int) -> Limits:
        """The limits of one session of `games` games on a rows x cols board: the CPU share,
        the wall ceiling and the output cap each grow by their allowance per game."""
        if games < 0:
            raise LimitsError([f"games must be >= 0, got {games}"])
        allowance = self.game_allowance(rows, cols) * games
        return replace(
            self,
            cpu_seconds_per_env=round(self.cpu_seconds_per_env + self.cpu_paces_per_game * allowance, 3),
            env_wall_seconds=round(self.env_wall_seconds + self.wall_paces_per_game * allowance, 3),
            output_cap_bytes=self.output_cap_bytes + self.output_bytes_per_game * games,
        )

    def session_totals(self, rows: int, cols: int, games: int) -> dict[str, float]:
        """{"cpu_seconds", "wall_seconds", "output_bytes"}: the totals of `for_session`."""
        scaled = self.for_session(rows, cols, games)
        return {
            "cpu_seconds": scaled.cpu_seconds_per_env,
            "wall_seconds": scaled.env_wall_seconds,
            "output_bytes": scaled.output_cap_bytes,
        }

    def to_dict(self) -> dict:
        """Plain data for a round's provenance (`limits:` in rounds/*.yaml)."""
        return asdict(self)

    def rows(self) -> list[tuple[str, str, str]]:
        """(name, value, meaning) rows of the rules page's limits table, in reading order."""
        pace_rows = [
            (
                f"act() pace, {shape}",
                f"{seconds * 1000:.1f} ms mean",
                f"mean act() time allowed on a {shape} board ({self.pace_seconds_per_cell * 1e3:.2f} ms per cell), "
                f"in each phase of an environment on its own (the self-play games, the checkpoint games, the "
                f"pairing games); a phase is judged after {self.pace_min_acts} of its calls, and an agent over "
                f"{self.pace_stop_factor:g}x the pace in a phase is stopped early (fault `timeout`)",
            )
            for shape, seconds in self.pace_table().items()
        ]
        return pace_rows + [
            (
                "act() soft limit",
                f"{self.act_soft_seconds:g} s",
                "a reply slower than this is recorded as an overrun, not a fault",
            ),
            (
                "act() hard limit",
                f"{self.act_hard_seconds:g} s",
                "no reply by then: the sandbox is killed, fault `timeout`",
            ),
            (
                "environment ceiling",
                f"{self.env_wall_seconds:g} s + {self.wall_paces_per_game:g} x pace x cells a game",
                "wall time of one environment session (paused while the round plays other entrants): the base, plus for "
                f"every game the session plays {self.wall_paces_per_game:g} times the board's pace times its cells, so "
                f"that it grows with the field's pairings ({self._example('wall_seconds', ' s')}); past it, fault `timeout`",
            ),
            (
                "CPU share",
                f"{self.cpu_seconds_per_env:g} CPU s + {self.cpu_paces_per_game:g} x pace x cells a game",
                "CPU time of all your processes in one environment: the base, plus for every game the session plays "
                f"{self.cpu_paces_per_game:g} times the board's pace times its cells (more than a game's acts at the pace "
                f"take), so that an agent inside the pace in every phase stays inside it at any field size "
                f"({self._example('cpu_seconds', ' CPU s')}); past it, fault `budget`",
            ),
            ("CPU cores", f"{self.cpu_cores:g}", "CPU quota of the sandbox; more threads do not buy more"),
            (
                "start and prepare()",
                f"{self.prepare_seconds:g} s",
                "import of agent.py, Agent() and each prepare() call",
            ),
            ("memory", size_text(self.memory_bytes), "resident memory of the sandbox (no swap)"),
            (
                "address space",
                size_text(self.address_space_bytes),
                "virtual memory per process; a larger allocation raises MemoryError",
            ),
            ("processes and threads", str(self.pids), "counted together: 'can't start new thread' means this limit"),
            ("open files", str(self.open_files), "file descriptors per process"),
            ("/tmp", size_text(self.tmpfs_bytes), "the only writable place; private, emptied for every environment"),
            (
                "output",
                f"{size_text(self.output_cap_bytes)} + {size_text(self.output_bytes_per_game)} a game",
                "stdout and stderr together in one environment: the base, plus this much for every game the session "
                f"plays ({self._example('output_bytes', '')}); past it the sandbox is killed, fault `agent_error`",
            ),
            ("log kept", size_text(self.log_keep_bytes), "how much of your output is kept for you (never published)"),
            (
                "illegal moves",
                str(self.illegal_moves_per_game),
                "per game; each costs the turn, this many forfeit the game",
            ),
            (
                "never legal",
                str(self.never_legal_attempts),
                "if your first this-many moves in an environment are all illegal, you forfeit it",
            ),
            (
                "largest field",
                str(self.largest_field),
                "the most entrants a round plays; the smoke test and "
                "`make check` project each phase of a session to a field this large",
            ),
        ]

    def _example(self, total: str, unit: str) -> str:
        """The limit's total for a session of a canonical round on a 12x10 board, at a field
        of 8 and at the largest field, as the table prints it."""
        from grader.common.schedule import session_games

        parts = []
        for field in (8, self.largest_field):
            value = self.session_totals(12, 10, session_games(field))[total]
            parts.append(f"{field} entrants: {size_text_round(int(value)) if not unit else f'{value:,.0f}{unit}'}")
        return "12x10 board, " + "; ".join(parts)


def size_text(n: int) -> str:
    """A byte count as the rules print it (8 MiB, 64 KiB; bytes when not a whole unit)."""
    for unit, size in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} bytes"


def size_text_round(n: int) -> str:
    """A byte count to a tenth of its unit (12.3 MiB), for figures that are not whole units."""
    for unit, size in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{n} bytes"


DEFAULT_LIMITS = Limits()
