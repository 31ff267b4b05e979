"""A round's capacity plan: what it costs, and whether it fits the runners given, before it starts.

The model is the schedule a round follows on its runners:

- A game costs its acts times the time an act takes: at the pace (the most the rules let an
  agent take, so the plan is an upper bound), or at the field's measured speed (its smoke
  tests' mean act time, as a fraction of the pace). A game has at most its playable cells less
  the four of the opening moves; the agent makes them all in self-play, half against the
  checkpoint opponent (the arena's `random`, whose time is nothing beside an agent's), and the
  two agents of a pairing take turns.
- Inside one environment, on a runner of C cores, the entrants' sessions play at the same time:
  an entrant's checkpoints and self-play hold one core, and so does a pairing game (its two
  agents take turns on one core, the one not to move stopped); every agent plays one game at
  a time. The environment
  takes the longer of its core time over C cores and its longest chain (an entrant's
  learning, then its pairings one after another).
- The environments are shared over the runners as `grader.schedule.shard_indices` shares
  them; a runner plays its environments one after another, and the round takes as long as its
  slowest runner.

Every entrant's session of an environment is live until the environment ends (its agent is
frozen for the pairings), so a runner holds one live sandbox per entrant: their memory is the
field's size times the live memory of one (measured, docs/runners.md), and at most the field's
size times the memory limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from engine import EnvSpec
from engine.tiers import DEFAULT_GENERATED_COUNT, GEN_MAX_SIDE
from grader.limits import GIB, MIB, Limits
from grader.schedule import games_per_env, shard_indices

# The live memory of one entrant's sandbox, by backend: an idle agent after prepare() (the
# runner, numpy imported) with the sandbox's own processes on the host. Measured with the
# example agents by `python -m benchmarks capacity` (docs/runners.md).
LIVE_MEMORY_PER_ENTRANT = {"local": 18 * MIB, "docker": 33 * MIB}
OPENING_CELLS = 4


class CapacityError(ValueError):
    """Machines or a field that no plan can be made for; the message names what is wrong."""


@dataclass(frozen=True)
class Machines:
    """The runners a round is dispatched to: how many, the cores of each, the job limit."""

    runners: int
    cores: int
    job_hours: float | None = None  # None: no limit (a round run by hand)

    def __post_init__(self) -> None:
        problems = [f"{name} must be at least 1, got {value}" for name, value in
                    (("runners", self.runners), ("cores", self.cores)) if value < 1]
        if self.job_hours is not None and not self.job_hours > 0:
            problems.append(f"the job limit must be more than 0 hours, got {self.job_hours}")
        if problems:
            raise CapacityError("; ".join(problems))


@dataclass(frozen=True)
class EnvCost:
    """One environment's games and time on one runner."""

    name: str
    shape: str
    games: int
    cpu_seconds: float  # the agents' compute, at the plan's speed
    wall_seconds: float  # on one runner of the plan's cores


@dataclass(frozen=True)
class CapacityPlan:
    """The plan of one round on given machines; `fits` when it ends inside the job limit."""

    entrants: int
    machines: Machines
    envs: tuple[EnvCost, ...]
    cpu_hours_at_pace: float
    cpu_hours_measured: float | None  # at the field's measured speed, when known
    measured_fraction: float | None
    wall_hours: float  # at the pace, on the slowest runner
    wall_hours_measured: float | None
    peak_sandboxes: int  # live sandboxes on one runner at once
    memory_bytes: int  # their live memory (measured per entrant)
    memory_limit_bytes: int  # their memory if every agent used its whole limit
    runners_needed: int | None  # the fewest runners that end inside the job limit; None: none do
    shapes_known: bool

    @property
    def games(self) -> int:
        return sum(env.games for env in self.envs)

    @property
    def floor_hours(self) -> float:
        """The CPU hours at the pace over every core of every runner given: no sharing of the
        work ends the round sooner. (An environment's frozen agents are processes of one
        runner, so its work is not shared across runners, and its largest one can set a
        wall time above this floor.)"""
        cores = min(self.machines.runners, len(self.envs)) * self.machines.cores
        return self.cpu_hours_at_pace / cores

    @property
    def fits(self) -> bool:
        return self.machines.job_hours is None or self.wall_hours <= self.machines.job_hours

    def lines(self) -> list[str]:
        """The plan as the command prints it."""
        m = self.machines
        measured = ("" if self.cpu_hours_measured is None else
                    f"; {self.cpu_hours_measured:,.2f} at the field's measured speed "
                    f"({100 * self.measured_fraction:.0f}% of the pace)")  # type: ignore[operator]
        slowest = max(self.envs, key=lambda e: e.wall_seconds)
        out = [f"capacity plan: {self.entrants} entrants, {len(self.envs)} environments, {self.games:,} games",
               f"  CPU hours: {self.cpu_hours_at_pace:,.2f} at the pace{measured}",
               f"  live sandboxes: {self.peak_sandboxes} at once on each runner, {size(self.memory_bytes)} live "
               f"(up to {size(self.memory_limit_bytes)} if every agent used its memory limit)",
               f"  wall time on {m.runners} runner(s) of {m.cores} core(s): {duration(self.wall_hours)} at the pace"
               + ("" if self.wall_hours_measured is None else
                  f", {duration(self.wall_hours_measured)} at the measured speed")
               + f" (slowest environment: {slowest.name}, {slowest.shape}, {duration(slowest.wall_seconds / 3600)})"
               + ("" if m.job_hours is None else f"; job limit {m.job_hours:g} h"),
               f"  floor: {duration(self.floor_hours)} (the CPU hours at the pace over all "
               f"{min(m.runners, len(self.envs)) * m.cores:,} cores: no schedule ends sooner on these runners)"]
        if not self.shapes_known:
            out.append("  board shapes unknown without the tier seed: every environment planned as the largest "
                       "board the generator draws")
        if m.job_hours is None:
            pass
        elif self.fits:
            out.append("  fits: yes")
        elif self.runners_needed is not None:
            out.append(f"  fits: NO - it needs {self.runners_needed} runners of {m.cores} cores to end inside "
                       f"{m.job_hours:g} h")
        else:
            out.append(f"  fits: NO - no number of runners of {m.cores} cores ends it inside {m.job_hours:g} h "
                       "(its slowest environment alone takes longer): more cores per runner, fewer entrants or games")
        return out


def duration(hours: float) -> str:
    """Hours as the plan prints them: hours from a tenth of one, else minutes."""
    return f"{hours:,.1f} h" if hours >= 0.1 else f"{hours * 60:.1f} min"


def size(n: int) -> str:
    return f"{n / GIB:,.1f} GiB" if n >= GIB else f"{n / MIB:.0f} MiB"


class Board(NamedTuple):
    """What the plan needs of an environment: its name and its board."""

    name: str
    rows: int
    cols: int
    obstacles: int

    @classmethod
    def of(cls, spec: EnvSpec) -> "Board":
        return cls(spec.name, spec.layout.rows, spec.layout.cols, len(spec.layout.obstacles))

    @property
    def acts_per_game(self) -> int:
        """The most acts a game has: the playable cells less the opening's."""
        return self.rows * self.cols - self.obstacles - OPENING_CELLS


def unknown_boards(tier: str, count: int | None) -> list[Board]:
    """A generated tier's environments when its seed is not given: `count` (default the
    tier's) of the largest board the generator draws, so that the plan is an upper bound."""
    return [Board(f"{tier}-{i:02d}", GEN_MAX_SIDE, GEN_MAX_SIDE, 0)
            for i in range(1, (count or DEFAULT_GENERATED_COUNT) + 1)]


def env_cost(board: Board, entrants: int, checkpoints: list[int], per_checkpoint: int, per_pairing: int,
             budget: int, cores: int, act_seconds: float) -> EnvCost:
    """One environment on one runner of `cores` cores, every act taking `act_seconds`."""
    game = board.acts_per_game * act_seconds  # a game's wall time: its acts one after another
    learning = budget * game + len(checkpoints) * per_checkpoint * game / 2
    pairing_games = entrants * (entrants - 1) // 2 * per_pairing
    cpu = entrants * learning + pairing_games * game  # a pairing game holds one core: its agents take turns
    chain = learning + (entrants - 1) * per_pairing * game
    wall = max(cpu / cores, chain)
    return EnvCost(board.name, f"{board.rows}x{board.cols}",
                   games_per_env(entrants, checkpoints, per_checkpoint, per_pairing, budget), cpu, wall)


def _wall_hours(costs: list[EnvCost], runners: int) -> float:
    """The slowest runner's hours when `costs` are shared over `runners` as shards are."""
    shards = [shard_indices(len(costs), (i, runners)) for i in range(1, runners + 1)]
    return max(sum(costs[i].wall_seconds for i in shard) for shard in shards) / 3600


def runners_needed(costs: list[EnvCost], job_hours: float) -> int | None:
    """The fewest runners whose slowest ends inside `job_hours`; None when even one
    environment per runner does not."""
    for runners in range(1, len(costs) + 1):
        if _wall_hours(costs, runners) <= job_hours:
            return runners
    return None


def plan_capacity(boards: list[Board], entrants: int, checkpoints: list[int], per_checkpoint: int,
                  per_pairing: int, budget: int, machines: Machines, limits: Limits, sandbox: str = "docker",
                  measured_fraction: float | None = None, shapes_known: bool = True) -> CapacityPlan:
    """The capacity plan of a round of `entrants` on `boards` (each game at the pace, and at
    `measured_fraction` of it when the field's speed is known) on `machines`."""
    if entrants < 1:
        raise CapacityError(f"a round needs at least one entrant, got {entrants}")
    if not boards:
        raise CapacityError("a round needs at least one environment")
    if measured_fraction is not None and not measured_fraction > 0:
        raise CapacityError(f"the measured speed must be a positive fraction of the pace, got {measured_fraction}")

    def costs(fraction: float) -> list[EnvCost]:
        return [env_cost(board, entrants, checkpoints, per_checkpoint, per_pairing, budget, machines.cores,
                         fraction * limits.pace_seconds(board.rows, board.cols)) for board in boards]

    at_pace = costs(1.0)
    measured = None if measured_fraction is None else costs(measured_fraction)
    runners = min(machines.runners, len(boards))  # a runner with no environment adds nothing
    wall = _wall_hours(at_pace, runners)
    limit = machines.job_hours
    if sandbox not in LIVE_MEMORY_PER_ENTRANT:
        raise CapacityError(f"no live memory is measured for the {sandbox!r} sandbox "
                            f"(one of {', '.join(LIVE_MEMORY_PER_ENTRANT)})")
    return CapacityPlan(
        entrants=entrants, machines=machines, envs=tuple(at_pace),
        cpu_hours_at_pace=sum(c.cpu_seconds for c in at_pace) / 3600,
        cpu_hours_measured=None if measured is None else sum(c.cpu_seconds for c in measured) / 3600,
        measured_fraction=measured_fraction,
        wall_hours=wall,
        wall_hours_measured=None if measured is None else _wall_hours(measured, runners),
        peak_sandboxes=entrants,
        memory_bytes=entrants * LIVE_MEMORY_PER_ENTRANT[sandbox],
        memory_limit_bytes=entrants * limits.memory_bytes,
        runners_needed=runners if limit is None or wall <= limit else runners_needed(at_pace, limit),
        shapes_known=shapes_known)


def measured_fraction(speeds: list[float | None]) -> float | None:
    """The field's speed as a fraction of the pace: the mean over its entrants of each one's
    smoke-test fraction (None for an entrant without one); None when no entrant has one."""
    known = [s for s in speeds if s is not None]
    return sum(known) / len(known) if known else None


def boards_for(tier: str, envs: str | None, tier_seed: str | None) -> tuple[list[Board], bool]:
    """The boards of a round's environments, and whether their shapes are known: a generated
    tier's are drawn from its seed, and without it planned as the largest (`unknown_boards`)."""
    from grader.rounds.orchestrate import select_envs
    if tier in ("ladder", "final") and tier_seed is None:
        count = None if envs is None else int(envs) if envs.isdigit() else len(envs.split(","))
        return unknown_boards(tier, count), False
    return [Board.of(spec) for spec in select_envs(tier, envs, tier_seed)], True


def plan_of_round(plan, runners: int, cores: int) -> CapacityPlan:
    """The capacity plan of a round's plan (grader.rounds.plan.RoundPlan) on `runners`
    runners (its shards) of `cores` cores (its --jobs), with no job limit."""
    return plan_capacity([Board.of(entry.spec) for entry in plan.envs], len(plan.field), list(plan.checkpoints),
                         plan.games_per_checkpoint, plan.pairing_games, plan.budget, Machines(runners, cores),
                         plan.limits, plan.sandbox if plan.sandbox in LIVE_MEMORY_PER_ENTRANT else "local")
