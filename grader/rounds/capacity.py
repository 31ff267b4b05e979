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
- Every move also costs the arena's own host time (HOST_SECONDS_PER_MOVE, measured by
  `python -m benchmarks shards`), added to each act.
- The environments are shared over the runners by their predicted cost (`assign_shards`:
  longest first, each to the runner with the least so far), the same way in `arena round
  --shard`, round.yml and this plan; a runner plays its environments one after another, and
  the round takes as long as its slowest runner. No schedule beats the bound, the larger of
  the floor (the CPU time over every core) and the largest environment (an environment is one
  runner's work); the plan prints its ratio to it.

Every entrant's session of an environment is live until the environment ends (its agent is
frozen for the pairings), so a runner holds one live sandbox per entrant at once. Their memory
is the sum of the entrants' peak resident memory as their smoke tests measured it (the live
memory of an idle sandbox, docs/runners.md, for an entrant without a measure), plus what each
sandbox costs on the host outside its cgroup; a round whose runner cannot hold that is refused
before it starts, naming the memory it needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from engine import EnvSpec
from engine.tiers import DEFAULT_GENERATED_COUNT, GEN_MAX_SIDE
from grader.common.limits import GIB, MIB, Limits
from grader.common.schedule import games_per_env

# The live memory of one entrant's sandbox, by backend: an idle agent after prepare() (the
# runner, numpy imported) with the sandbox's own processes on the host. Measured with the
# example agents by `python -m benchmarks capacity` (docs/runners.md).
LIVE_MEMORY_PER_ENTRANT = {"local": 18 * MIB, "docker": 33 * MIB}
# What a sandbox costs the host outside its own cgroup (which its smoke test's peak measures):
# in docker the engine's shim process beside each container, the difference of the two live
# figures above; the embedded sandbox's bwrap runs inside its cgroup.
HOST_MEMORY_PER_SANDBOX = {"local": 0, "docker": LIVE_MEMORY_PER_ENTRANT["docker"] - LIVE_MEMORY_PER_ENTRANT["local"]}
# The arena's own process on a runner (the round, its lanes and the games' records), kept free
# of the agents' memory.
ARENA_MEMORY = 512 * MIB
# The arena's own host time per move: its game loop, the frame to the agent and the reply read,
# and the turns of the pairing's two sandboxes. Measured by `python -m benchmarks shards` (a
# round of example agents in the embedded sandbox, the round process's CPU over its moves):
# 185 and 200 us on 2 cores at a load average of 11 to 13 (the lanes benchmark measured 143 us
# on a quiet machine), so the plan errs long.
HOST_SECONDS_PER_MOVE = 190e-6
OPENING_CELLS = 4
# How far a shard plan may be from its bound.
SHARD_RATIO_TARGET = 1.10


class CapacityError(ValueError):
    """Machines or a field that no plan can be made for; the message names what is wrong."""


@dataclass(frozen=True)
class Machines:
    """The runners a round is dispatched to: how many, the cores of each, the job limit."""

    runners: int
    cores: int
    job_hours: float | None = None  # None: no limit (a round run by hand)
    memory_bytes: int | None = None  # each runner's memory; None: not checked

    def __post_init__(self) -> None:
        problems = [
            f"{name} must be at least 1, got {value}"
            for name, value in (("runners", self.runners), ("cores", self.cores))
            if value < 1
        ]
        if self.job_hours is not None and not self.job_hours > 0:
            problems.append(f"the job limit must be more than 0 hours, got {self.job_hours}")
        if self.memory_bytes is not None and not self.memory_bytes > 0:
            problems.append(f"a runner's memory must be more than 0, got {self.memory_bytes}")
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
    memory_bytes: int  # the memory a runner needs for them (and the arena), at the entrants' peaks
    memory_limit_bytes: int  # their memory if every agent used its whole limit
    runners_needed: int | None  # the fewest runners that end inside the job limit; None: none do
    shapes_known: bool
    shards: tuple[tuple[int, ...], ...] = ()  # each runner's environments (positions in `envs`)
    memory_measured: int = 0  # entrants whose peak memory was measured (the rest at the idle figure)
    largest_memory: int = 0  # the largest entrant's peak

    @property
    def bound_hours(self) -> float:
        """The least any schedule of these environments on these runners can take: the larger
        of the floor and the largest environment."""
        return max(self.floor_hours, max(env.wall_seconds for env in self.envs) / 3600)

    @property
    def ratio(self) -> float:
        """The plan's wall time over its bound (1.0: no schedule is faster)."""
        return self.wall_hours / self.bound_hours if self.bound_hours > 0 else 1.0

    @property
    def memory_fits(self) -> bool:
        return self.machines.memory_bytes is None or self.memory_bytes <= self.machines.memory_bytes

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
    def time_fits(self) -> bool:
        return self.machines.job_hours is None or self.wall_hours <= self.machines.job_hours

    @property
    def fits(self) -> bool:
        return self.time_fits and self.memory_fits

    def memory_refusal(self) -> str | None:
        """Why the runners cannot hold the round's live sandboxes, with what to change; None when they can."""
        if self.memory_fits:
            return None
        return (
            f"its {self.peak_sandboxes} frozen agents stay alive together on each runner and need "
            f"{size(self.memory_bytes)} (the entrants' measured peaks, {self.memory_measured} of "
            f"{self.peak_sandboxes} measured, the largest {size(self.largest_memory)}, and the arena's own), over the "
            f"runner's {size(self.machines.memory_bytes or 0)}: give each runner at least "
            f"{size(self.memory_bytes)}, or play fewer entrants a round"
        )

    def lines(self) -> list[str]:
        """The plan as the command prints it."""
        m = self.machines
        measured = (
            ""
            if self.cpu_hours_measured is None
            else f"; {self.cpu_hours_measured:,.2f} at the field's measured speed "
            f"({100 * self.measured_fraction:.0f}% of the pace)"  # type: ignore[operator]
        )
        slowest = max(self.envs, key=lambda e: e.wall_seconds)
        out = [
            f"capacity plan: {self.entrants} entrants, {len(self.envs)} environments, {self.games:,} games",
            f"  CPU hours: {self.cpu_hours_at_pace:,.2f} at the pace{measured}",
            f"  live sandboxes: {self.peak_sandboxes} at once on each runner, {size(self.memory_bytes)} needed at "
            f"the entrants' peaks ({self.memory_measured} of {self.peak_sandboxes} measured, the largest "
            f"{size(self.largest_memory)}; up to {size(self.memory_limit_bytes)} if every agent used its memory "
            f"limit)" + ("" if m.memory_bytes is None else f"; each runner has {size(m.memory_bytes)}"),
            f"  wall time on {m.runners} runner(s) of {m.cores} core(s): {duration(self.wall_hours)} at the pace"
            + (
                ""
                if self.wall_hours_measured is None
                else f", {duration(self.wall_hours_measured)} at the measured speed"
            )
            + f" (slowest environment: {slowest.name}, {slowest.shape}, {duration(slowest.wall_seconds / 3600)})"
            + ("" if m.job_hours is None else f"; job limit {m.job_hours:g} h"),
            f"  floor: {duration(self.floor_hours)} (the CPU hours at the pace over all "
            f"{min(m.runners, len(self.envs)) * m.cores:,} cores: no schedule ends sooner on these runners)",
            f"  shards by predicted cost: bound {duration(self.bound_hours)} (the larger of the floor and the "
            f"largest environment, {duration(max(e.wall_seconds for e in self.envs) / 3600)}); this plan "
            f"{duration(self.wall_hours)}, ratio {self.ratio:.3f}"
            f" (host time {HOST_SECONDS_PER_MOVE * 1e6:.0f} us a move included)",
        ]
        if not self.shapes_known:
            out.append(
                "  board shapes unknown without the tier seed: every environment planned as the largest "
                "board the generator draws"
            )
        refusal = self.memory_refusal()
        if refusal is not None:
            out.append(f"  memory: NO - {refusal}")
        if m.job_hours is None:
            pass
        elif self.time_fits:
            out.append("  fits: yes" if refusal is None else "  time fits: yes")
        elif self.runners_needed is not None:
            out.append(
                f"  fits: NO - it needs {self.runners_needed} runners of {m.cores} cores to end inside "
                f"{m.job_hours:g} h"
            )
        else:
            out.append(
                f"  fits: NO - no number of runners of {m.cores} cores ends it inside {m.job_hours:g} h "
                "(its slowest environment alone takes longer): more cores per runner, fewer entrants or games"
            )
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
    def of(cls, spec: EnvSpec) -> Board:
        return cls(spec.name, spec.layout.rows, spec.layout.cols, len(spec.layout.obstacles))

    @property
    def acts_per_game(self) -> int:
        """The most acts a game has: the playable cells less the opening's."""
        return self.rows * self.cols - self.obstacles - OPENING_CELLS


def unknown_boards(tier: str, count: int | None) -> list[Board]:
    """A generated tier's environments when its seed is not given: `count` (default the
    tier's) of the largest board the generator draws, so that the plan is an upper bound."""
    return [
        Board(f"{tier}-{i:02d}", GEN_MAX_SIDE, GEN_MAX_SIDE, 0)
        for i in range(1, (count or DEFAULT_GENERATED_COUNT) + 1)
    ]


def game_seconds(board: Board, act_seconds: float) -> float:
    """A game's time: its acts one after another, each with the arena's host time per move."""
    return board.acts_per_game * (act_seconds + HOST_SECONDS_PER_MOVE)


def env_cost(
    board: Board,
    entrants: int,
    checkpoints: list[int],
    per_checkpoint: int,
    per_pairing: int,
    budget: int,
    cores: int,
    act_seconds: float,
) -> EnvCost:
    """One environment on one runner of `cores` cores, every act taking `act_seconds`."""
    game = game_seconds(board, act_seconds)
    learning = budget * game + len(checkpoints) * per_checkpoint * game / 2
    pairing_games = entrants * (entrants - 1) // 2 * per_pairing
    cpu = entrants * learning + pairing_games * game  # a pairing game holds one core: its agents take turns
    chain = learning + (entrants - 1) * per_pairing * game
    wall = max(cpu / cores, chain)
    return EnvCost(
        board.name,
        f"{board.rows}x{board.cols}",
        games_per_env(entrants, checkpoints, per_checkpoint, per_pairing, budget),
        cpu,
        wall,
    )


def assign_shards(costs: list[float], runners: int) -> list[list[int]]:
    """The positions of `costs` each of `runners` plays: longest first, each to the runner with
    the least so far (ties to the lower runner), then single moves and swaps between the
    slowest runner and the others while they shorten it. Deterministic: every runner of a
    round computes the same shares from the same plan. Each share is in position order."""
    runners = max(1, runners)
    shares: list[list[int]] = [[] for _ in range(runners)]
    loads = [0.0] * runners
    for i in sorted(range(len(costs)), key=lambda i: (-costs[i], i)):
        least = min(range(runners), key=lambda r: (loads[r], r))
        shares[least].append(i)
        loads[least] += costs[i]
    for _ in range(4 * len(costs)):  # each step shortens the slowest runner, or ends the search
        slow = max(range(runners), key=lambda r: (loads[r], -r))
        best: tuple[float, int, int | None, int] | None = None  # (new max of the two, i, j, other)
        for other in range(runners):
            if other == slow:
                continue
            for i in shares[slow]:
                for j in [None, *shares[other]]:
                    delta = costs[i] - (0.0 if j is None else costs[j])
                    if delta <= 0:
                        continue
                    pair_max = max(loads[slow] - delta, loads[other] + delta)
                    if pair_max < loads[slow] - 1e-9 and (best is None or pair_max < best[0]):
                        best = (pair_max, i, j, other)
        if best is None:
            break
        _, i, j, other = best
        shares[slow].remove(i)
        shares[other].append(i)
        loads[slow] -= costs[i]
        loads[other] += costs[i]
        if j is not None:
            shares[other].remove(j)
            shares[slow].append(j)
            loads[other] -= costs[j]
            loads[slow] += costs[j]
    return [sorted(share) for share in shares]


def shard_weights(boards: list[Board], limits: Limits) -> list[float]:
    """Each environment's predicted cost, for sharing them out: a game's time at the pace. Every
    environment of a round plays the same field and schedule, so its time is this times the
    same factor (on any number of cores): the shares do not depend on the runners' cores."""
    return [game_seconds(b, limits.pace_seconds(b.rows, b.cols)) for b in boards]


def plan_shard(boards: list[Board], limits: Limits, shard: tuple[int, int] | None) -> list[int]:
    """The environment positions shard (I, N) plays, by predicted cost (all without a shard)."""
    if shard is None:
        return list(range(len(boards)))
    index, count = shard
    return assign_shards(shard_weights(boards, limits), count)[index - 1]


def _wall_hours(costs: list[EnvCost], runners: int, weights: list[float]) -> tuple[float, list[list[int]]]:
    """The slowest runner's hours when `costs` are shared over `runners` by `weights`, and the shares."""
    shards = assign_shards(weights, runners)
    return max(sum(costs[i].wall_seconds for i in shard) for shard in shards) / 3600, shards


def runners_needed(costs: list[EnvCost], job_hours: float, weights: list[float] | None = None) -> int | None:
    """The fewest runners whose slowest ends inside `job_hours` (environments shared by
    `weights`, default their wall time); None when even one environment per runner does not."""
    weights = [c.wall_seconds for c in costs] if weights is None else weights
    for runners in range(1, len(costs) + 1):
        if _wall_hours(costs, runners, weights)[0] <= job_hours:
            return runners
    return None


def memory_needed(entrants: int, measured: list[int | None] | None, sandbox: str) -> tuple[int, int, int]:
    """(bytes a runner needs for the field's live sandboxes and the arena, entrants measured,
    the largest peak): each entrant at its measured peak (never below an idle sandbox's live
    memory; that figure where unmeasured), plus its sandbox's host-side cost."""
    if sandbox not in LIVE_MEMORY_PER_ENTRANT:
        raise CapacityError(
            f"no live memory is measured for the {sandbox!r} sandbox (one of {', '.join(LIVE_MEMORY_PER_ENTRANT)})"
        )
    idle = LIVE_MEMORY_PER_ENTRANT[sandbox]
    peaks = list(measured or [])[:entrants]
    peaks += [None] * (entrants - len(peaks))
    each = [idle if peak is None else max(peak, idle) for peak in peaks]
    need = sum(each) + entrants * HOST_MEMORY_PER_SANDBOX[sandbox] + ARENA_MEMORY
    return need, sum(peak is not None for peak in peaks), max(each, default=0)


def plan_capacity(
    boards: list[Board],
    entrants: int,
    checkpoints: list[int],
    per_checkpoint: int,
    per_pairing: int,
    budget: int,
    machines: Machines,
    limits: Limits,
    sandbox: str = "docker",
    measured_fraction: float | None = None,
    shapes_known: bool = True,
    memory: list[int | None] | None = None,
    sandboxed: int | None = None,
) -> CapacityPlan:
    """The capacity plan of a round of `entrants` on `boards` (each game at the pace, and at
    `measured_fraction` of it when the field's speed is known) on `machines`; `memory` is
    the measured peak memory of each entrant in a sandbox (None for one not measured), and
    `sandboxed` how many of the entrants play in one (default all: the others run in the
    arena's process)."""
    if entrants < 1:
        raise CapacityError(f"a round needs at least one entrant, got {entrants}")
    if entrants > limits.largest_field:
        raise CapacityError(
            f"{entrants} entrants: a round plays at most {limits.largest_field} "
            "(the limits' largest field, which the smoke test projects sessions to)"
        )
    if not boards:
        raise CapacityError("a round needs at least one environment")
    if measured_fraction is not None and not measured_fraction > 0:
        raise CapacityError(f"the measured speed must be a positive fraction of the pace, got {measured_fraction}")

    def costs(fraction: float) -> list[EnvCost]:
        return [
            env_cost(
                board,
                entrants,
                checkpoints,
                per_checkpoint,
                per_pairing,
                budget,
                machines.cores,
                fraction * limits.pace_seconds(board.rows, board.cols),
            )
            for board in boards
        ]

    at_pace = costs(1.0)
    measured = None if measured_fraction is None else costs(measured_fraction)
    weights = shard_weights(boards, limits)
    runners = min(machines.runners, len(boards))  # a runner with no environment adds nothing
    wall, shards = _wall_hours(at_pace, runners, weights)
    limit = machines.job_hours
    live = entrants if sandboxed is None else sandboxed
    need, counted, largest = memory_needed(live, memory, sandbox)
    return CapacityPlan(
        entrants=entrants,
        machines=machines,
        envs=tuple(at_pace),
        cpu_hours_at_pace=sum(c.cpu_seconds for c in at_pace) / 3600,
        cpu_hours_measured=None if measured is None else sum(c.cpu_seconds for c in measured) / 3600,
        measured_fraction=measured_fraction,
        wall_hours=wall,
        wall_hours_measured=None if measured is None else _wall_hours(measured, runners, weights)[0],
        peak_sandboxes=live,
        memory_bytes=need,
        memory_limit_bytes=live * limits.memory_bytes,
        runners_needed=runners if limit is None or wall <= limit else runners_needed(at_pace, limit, weights),
        shapes_known=shapes_known,
        shards=tuple(tuple(s) for s in shards),
        memory_measured=counted,
        largest_memory=largest,
    )


def host_memory(field: str = "MemTotal") -> int | None:
    """This host's memory in bytes (`field` of /proc/meminfo: MemTotal, or MemAvailable for
    what is free now), None where it cannot be read."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def measured_fraction(speeds: list[float | None]) -> float | None:
    """The field's speed as a fraction of the pace: the mean over its entrants of each one's
    smoke-test fraction (None for an entrant without one); None when no entrant has one."""
    known = [s for s in speeds if s is not None]
    return sum(known) / len(known) if known else None


def boards_for(tier: str, envs: str | None, tier_seed: str | None) -> tuple[list[Board], bool]:
    """The boards of a round's environments, and whether their shapes are known: a generated
    tier's are drawn from its seed, and without it planned as the largest (`unknown_boards`)."""
    from grader.rounds.environments import select_envs

    if tier in ("ladder", "final") and tier_seed is None:
        count = None if envs is None else int(envs) if envs.isdigit() else len(envs.split(","))
        return unknown_boards(tier, count), False
    return [Board.of(spec) for spec in select_envs(tier, envs, tier_seed)], True


def plan_of_round(
    plan, runners: int, cores: int, memory: list[int | None] | None = None, runner_memory: int | None = None
) -> CapacityPlan:
    """The capacity plan of a round's plan (grader.rounds.plan.RoundPlan) on `runners`
    runners (its shards) of `cores` cores (its --jobs) of `runner_memory` bytes each, with no
    job limit; `memory` is each entrant's measured peak, in the field's order. Only the
    entrants that play in a sandbox (submissions) count for memory."""
    in_sandbox = [i for i, entrant in enumerate(plan.field) if entrant.kind == "submission"]
    peaks = None if memory is None else [memory[i] for i in in_sandbox]
    return plan_capacity(
        [Board.of(entry.spec) for entry in plan.envs],
        len(plan.field),
        list(plan.checkpoints),
        plan.games_per_checkpoint,
        plan.pairing_games,
        plan.budget,
        Machines(runners, cores, memory_bytes=runner_memory),
        plan.limits,
        plan.sandbox if plan.sandbox in LIVE_MEMORY_PER_ENTRANT else "local",
        memory=peaks,
        sandboxed=len(in_sandbox),
    )
