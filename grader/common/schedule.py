"""What a round plays, in which order, with which seed (docs/architecture.md, "A round").

Every game's seed is `derive_seed(round seed, environment id, phase, place...)`: a hash of its
place, never a running RNG, so a game is the same game whatever worker plays it, in whatever
order, in whichever shard. Nothing here plays a game; it only names them.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine import Color, derive_seed

CANONICAL_CHECKPOINTS = (0, 100, 500, 1000, 2000)
CANONICAL_BUDGET = 2000
DEFAULT_GAMES_PER_CHECKPOINT = 20
DEFAULT_PAIRING_GAMES = 20
# The fixed opponent of the win-rate curve, as it is named in game records. The "@" keeps it
# apart from an entrant that is itself the `random` reference player.
CHECKPOINT_OPPONENT = "random"
CHECKPOINT_LABEL = "@random"


class ScheduleError(ValueError):
    """A round parameter that cannot make a schedule; the message names it."""


def default_checkpoints(budget: int) -> list[int]:
    """The canonical checkpoints below `budget`, then `budget` itself (0, 100, 200 for 200)."""
    return [b for b in CANONICAL_CHECKPOINTS if b < budget] + [budget]


def parse_checkpoints(text: str | None, budget: int) -> list[int]:
    """`0,100,500` -> [0, 100, 500], checked: increasing, from 0, ending at the budget."""
    if budget < 1:
        raise ScheduleError(f"--budget must be at least 1, got {budget}")
    if text is None:
        return default_checkpoints(budget)
    try:
        points = [int(part) for part in text.split(",")]
    except ValueError:
        raise ScheduleError(f"--checkpoints must be integers separated by commas, got {text!r}") from None
    check_checkpoints(points, budget)
    return points


def sae_warning(points: list[int]) -> str | None:
    """Why checkpoints `points` give no SAE (fewer than two non-zero ones: an empty window), as a
    warning for the one who plans the round; None when they give one."""
    nonzero = [b for b in points if b > 0]
    if len(nonzero) >= 2:
        return None
    return (
        f"checkpoints {','.join(map(str, points))} have {len(nonzero)} non-zero checkpoint"
        f'{"" if len(nonzero) == 1 else "s"}: every agent\'s SAE will be "no SAE" (the window needs two); '
        "give --checkpoints with two or more, e.g. 0,10,100, or a budget above 100"
    )


def check_checkpoints(points: list[int], budget: int) -> None:
    """Raise ScheduleError unless `points` starts at 0, increases strictly and ends at `budget`."""
    if not points or points[0] != 0:
        raise ScheduleError(f"--checkpoints must start at 0 (the zero-shot point), got {points}")
    if any(b <= a for a, b in zip(points, points[1:])):
        raise ScheduleError(f"--checkpoints must increase strictly, got {points}")
    if points[-1] != budget:
        raise ScheduleError(
            f"the last checkpoint must be the budget ({budget}), got {points[-1]}: "
            "budget games after the last checkpoint would be measured by nothing"
        )


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """`2/4` -> (2, 4): the second of four shards (1-based); None for no sharding."""
    if text is None:
        return None
    try:
        index, count = (int(p) for p in text.split("/"))
    except ValueError:
        raise ScheduleError(f"--shard must be I/N with integers, e.g. 1/4, got {text!r}") from None
    if not 1 <= index <= count:
        raise ScheduleError(f"--shard {text}: I must be between 1 and N")
    return index, count


def shard_indices(env_count: int, shard: tuple[int, int] | None) -> list[int]:
    """The environment positions a shard plays: every N-th, starting at I - 1 (all without one)."""
    if shard is None:
        return list(range(env_count))
    index, count = shard
    return list(range(index - 1, env_count, count))


def checkpoint_seed(round_seed: str, env_id: str, checkpoint: int, index: int) -> int:
    """The seed of checkpoint game `index` at `checkpoint`: the same for every agent, so every
    agent meets the same random stream (a paired comparison)."""
    return derive_seed(round_seed, env_id, "checkpoint", checkpoint, index)


def self_play_seed(round_seed: str, env_id: str, agent: str, index: int) -> int:
    return derive_seed(round_seed, env_id, "self-play", agent, index)


def pairing_seed(round_seed: str, env_id: str, a: str, b: str, index: int) -> int:
    return derive_seed(round_seed, env_id, "pairing", a, b, index)


def checkpoint_color(index: int) -> Color:
    """The agent's colour in checkpoint game `index`: black first, then alternating."""
    return Color.BLACK if index % 2 == 0 else Color.WHITE


@dataclass(frozen=True)
class Pairing:
    """One pairing game: `a` < `b` by name; colours alternate, `a` black first."""

    a: str
    b: str
    index: int

    @property
    def black(self) -> str:
        return self.a if self.index % 2 == 0 else self.b

    @property
    def white(self) -> str:
        return self.b if self.index % 2 == 0 else self.a


def pairs(names: list[str]) -> list[tuple[str, str]]:
    """Every unordered pair of the field, each as (a, b) with a < b, in sorted order."""
    ordered = sorted(names)
    return [(a, b) for i, a in enumerate(ordered) for b in ordered[i + 1 :]]


def pairing_games(a: str, b: str, games: int) -> list[Pairing]:
    """The `games` games of one pairing: half with each colour (games must be even)."""
    if games % 2:
        raise ScheduleError(f"--pairing-games must be even (half with each colour), got {games}")
    return [Pairing(a, b, i) for i in range(games)]


def session_games(
    field_size: int,
    checkpoints: list[int] | tuple[int, ...] = CANONICAL_CHECKPOINTS,
    per_checkpoint: int = DEFAULT_GAMES_PER_CHECKPOINT,
    per_pairing: int = DEFAULT_PAIRING_GAMES,
    budget: int = CANONICAL_BUDGET,
) -> int:
    """Games one agent's session of an environment plays in a field of `field_size`: its
    checkpoint games, its budget's self-play, and its pairing games against every other entrant."""
    return len(checkpoints) * per_checkpoint + budget + max(0, field_size - 1) * per_pairing


def games_per_env(field_size: int, checkpoints: list[int], per_checkpoint: int, per_pairing: int, budget: int) -> int:
    """Games one environment plays: per agent the checkpoints and the budget, then the pairings."""
    learning = field_size * (len(checkpoints) * per_checkpoint + budget)
    return learning + field_size * (field_size - 1) // 2 * per_pairing
