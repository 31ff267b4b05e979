"""Every aggregate of a round, computed from per-game outcomes and per-environment statuses.

The one place a round's numbers come from: `publish` calls it on the games it just played,
`arena verify` on a results file's games. An entrant that faulted in an environment scores zero
there; a pairing with a faulted opponent is void for the survivor (docs/architecture.md, "A round").
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from grader.common.faults import Payer, kinds
from grader.common.metrics import (
    INTERVAL_ENVIRONMENTS,
    INTERVAL_ENVIRONMENTS_FLOOR,
    INTERVAL_WILSON_GAMES,
    MetricError,
    Tally,
    endings_histogram,
    fit_elo,
    mean,
    rnd,
    sae,
    sae_window,
    spread,
    standing,
    standing_interval,
    wilson,
    win_draw_rates,
)
from grader.common.schedule import CHECKPOINT_LABEL
from grader.play.games import ScoredGame
from grader.rounds.results import AgentMetrics, CurvePoint, EnvAgent, PairResult, Record, SaeValue, Spread, Standing

MIN_FIELD_FOR_STANDING = 8
MIN_ENVS_FOR_PUBLIC = 8
AGENT_FAULT_KINDS = list(kinds(Payer.AGENT))


@dataclass
class ScoringInput:
    """What the numbers are computed from. `statuses[label][name]` is "ok" or a fault kind."""

    names: list[str]
    labels: list[str]
    checkpoints: list[int]
    games_per_checkpoint: int
    pairing_games: int
    statuses: dict[str, dict[str, str]]
    games: list[dict]  # stored as a round stores them (grader.play.games.ScoredGame), full or projected
    elo_anchor: str | None  # the name of the reference `random` entrant, if it is in the field
    # How the standing's interval is computed; a round records it, and verify recomputes a
    # round by the method it names (rounds that name none used INTERVAL_WILSON_GAMES).
    interval_method: str = INTERVAL_ENVIRONMENTS_FLOOR


@dataclass
class Scores:
    agents: list[AgentMetrics]
    pairwise: list[PairResult]
    env_agents: dict[str, list[EnvAgent]]
    elo: dict
    standing_published: bool
    problems: list[str] = field(default_factory=list)


def result_for(game: ScoredGame, name: str) -> str:
    """win, draw or loss of `name` in `game`."""
    if game.winner is None:
        return "draw"
    return "win" if game.seat(game.winner) == name else "loss"


def _record(t: Tally) -> Record:
    return Record(t.wins, t.draws, t.losses, t.games)


def _interval(method: str, scores: list[float | None], games: int) -> list[float]:
    """The standing's interval by `method`, from the environments' scores and the games they stand on."""
    if method == INTERVAL_WILSON_GAMES:
        interval = wilson(standing(scores), games)
        return list(interval) if interval else [0.0, 1.0]
    if method in (INTERVAL_ENVIRONMENTS, INTERVAL_ENVIRONMENTS_FLOOR):
        return list(
            standing_interval([s for s in scores if s is not None], games, floor=method == INTERVAL_ENVIRONMENTS_FLOOR)
        )
    # A results document names its method, so `arena verify` brings any word here.
    raise MetricError("method", method, f"unknown interval method {method!r}")


@dataclass
class Tallies:
    """Phase 1's output: every game counted where it belongs, and what did not fit."""

    checkpoint: defaultdict = field(default_factory=lambda: defaultdict(Tally))  # (label, name, checkpoint) -> tally
    pair: defaultdict = field(default_factory=lambda: defaultdict(Tally))  # (label, a, b), a < b -> a's tally v b
    endings: dict[str, list[str]] = field(default_factory=dict)  # name -> how each of its games ended
    problems: list[str] = field(default_factory=list)


@dataclass
class AcrossEnvironments:
    """One agent's numbers in each environment, in the round's order of environments (phase 2)."""

    tallies: list[Tally] = field(default_factory=list)  # its pairing record there (empty where it faulted)
    scores: list[float | None] = field(default_factory=list)  # its match-point score there (0 where it faulted)
    curves: list[list[CurvePoint]] = field(default_factory=list)
    saes: list[float | None] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)  # the kind of each fault, one per environment it faulted in
    faulted_games: list[int] = field(default_factory=list)  # the pairing games each fault cost it


def compute(inp: ScoringInput) -> Scores:
    """Every aggregate of a round, in phases: tally the games, score each environment, aggregate
    each agent over the environments, rank, and fit the pairwise results and Elo."""
    tallies = tally_games(inp)
    env_agents, across = score_environments(inp, tallies)
    standing_published = len(inp.names) >= MIN_FIELD_FOR_STANDING
    agents = [aggregate_agent(inp, name, across[name], tallies.endings[name], standing_published) for name in inp.names]
    rank(agents)
    pairwise, elo = pairwise_and_elo(inp, tallies, agents, standing_published)
    return Scores(agents, pairwise, env_agents, elo, standing_published, tallies.problems)


def tally_games(inp: ScoringInput) -> Tallies:
    """Phase 1: count each game for its checkpoint or its pairing; a game that fits neither is a problem."""
    out = Tallies(endings={n: [] for n in inp.names})
    known_names, known_labels = set(inp.names), set(inp.labels)
    for i, g in enumerate(map(ScoredGame.from_doc, inp.games)):
        where = f"game {i} ({g.env} {g.phase} {g.black} v {g.white} #{g.index})"
        if g.env not in known_labels:
            out.problems.append(f"{where}: unknown environment {g.env!r}")
            continue
        players = [p for p in (g.black, g.white) if p != CHECKPOINT_LABEL]
        if any(p not in known_names for p in players):
            out.problems.append(f"{where}: a player is not in the field")
            continue
        for p in players:
            out.endings[p].append(g.ending)
        if g.phase == "checkpoint":
            if len(players) != 1 or g.checkpoint not in inp.checkpoints:
                out.problems.append(f"{where}: not a checkpoint game of this round")
                continue
            key = (g.env, players[0], g.checkpoint)
            out.checkpoint[key] = out.checkpoint[key].add(result_for(g, players[0]))
        else:
            if len(players) != 2 or players[0] == players[1]:
                out.problems.append(f"{where}: a pairing game needs two entrants")
                continue
            a, b = sorted(players)
            key = (g.env, a, b)
            out.pair[key] = out.pair[key].add(result_for(g, a))
    return out


def score_environments(
    inp: ScoringInput, tallies: Tallies
) -> tuple[dict[str, list[EnvAgent]], dict[str, AcrossEnvironments]]:
    """Phase 2: each agent's curve, SAE and score in each environment (zero where it faulted)."""
    problems = tallies.problems
    env_agents: dict[str, list[EnvAgent]] = {}
    across = {n: AcrossEnvironments() for n in inp.names}
    for label in inp.labels:
        status = inp.statuses.get(label, {})
        live = [n for n in inp.names if status.get(n) == "ok"]
        rows = []
        for name in inp.names:
            st = status.get(name)
            if st is None:
                problems.append(f"environment {label}: no status for {name}")
                st = "ok"
            faulted = st != "ok"
            curve, rates = [], []
            for b in inp.checkpoints:
                t = tallies.checkpoint[(label, name, b)]
                if not faulted and t.games != inp.games_per_checkpoint:
                    problems.append(
                        f"environment {label}: {name} has {t.games} checkpoint games at {b}, "
                        f"expected {inp.games_per_checkpoint}"
                    )
                w, d = (0.0, 0.0) if faulted else win_draw_rates(t)
                curve.append(CurvePoint(b, w, d))
                rates.append(w)
            env_sae = sae(inp.checkpoints, rates).value
            opponents = [o for o in live if o != name]
            tally = Tally()
            for o in opponents:
                a, b = sorted((name, o))
                t = tallies.pair[(label, a, b)]
                if not faulted and t.games != inp.pairing_games:
                    problems.append(
                        f"environment {label}: pairing {a} v {b} has {t.games} games, expected {inp.pairing_games}"
                    )
                if not faulted:
                    tally += t if a == name else Tally(t.losses, t.draws, t.wins)
            mine = across[name]
            if faulted:
                score = 0.0
                mine.faulted_games.append(inp.pairing_games * len(opponents))
                mine.faults.append(st)
            else:
                score = rnd(tally.points / tally.games) if tally.games else None
            mine.tallies.append(tally)
            mine.scores.append(score)
            mine.curves.append(curve)
            mine.saes.append(env_sae)
            rows.append(EnvAgent(name, st, curve, env_sae, score, _record(tally), {}))
        env_agents[label] = rows
    return env_agents, across


def aggregate_agent(
    inp: ScoringInput, name: str, mine: AcrossEnvironments, endings: list[str], standing_published: bool
) -> AgentMetrics:
    """Phase 3: one agent's numbers over the environments, each environment weighing the same."""
    labels = inp.labels
    window = sae_window(inp.checkpoints)
    curve = (
        [
            CurvePoint(
                b, rnd(mean([c[j].win_rate for c in mine.curves])), rnd(mean([c[j].draw_rate for c in mine.curves]))
            )
            for j, b in enumerate(inp.checkpoints)
        ]
        if labels
        else []
    )
    sae_value = rnd(mean(mine.saes)) if window and labels else None
    total = Tally()
    for t in mine.tallies:
        total += t
    faulted_games = sum(mine.faulted_games)
    value = standing(mine.scores)
    standing_row = None
    if standing_published and value is not None:
        standing_row = Standing(
            value,
            0,
            faulted_games,
            _interval(inp.interval_method, mine.scores, total.games + faulted_games),
            None if inp.interval_method == INTERVAL_WILSON_GAMES else inp.interval_method,
        )
    faults = {k: mine.faults.count(k) for k in AGENT_FAULT_KINDS}
    final_rates = [c[-1].win_rate for c in mine.curves]
    return AgentMetrics(
        name=name,
        curve=curve,
        sae=SaeValue(sae_value, *(window or (None, None))),
        record=_record(total),
        standing=standing_row,
        elo=None,
        faulted_envs=len(mine.faults),
        faults=faults,
        endings=endings_histogram(endings),
        spread=Spread(
            spread(final_rates),
            spread([s for s in mine.saes if s is not None]),
            spread([s for s in mine.scores if s is not None]),
        ),
    )


def rank(agents: list[AgentMetrics]) -> None:
    """Phase 4: ranks by standing; ties share the better rank (1, 2, 2, 4)."""
    ranked = sorted((a for a in agents if a.standing), key=lambda a: -a.standing.value)
    for a in ranked:
        a.standing.rank = 1 + sum(1 for b in ranked if b.standing.value > a.standing.value)


def pairwise_and_elo(
    inp: ScoringInput, tallies: Tallies, agents: list[AgentMetrics], standing_published: bool
) -> tuple[list[PairResult], dict]:
    """Phase 5: the pairings pooled over the environments where both sides lived, and the Elo fitted to them."""
    pooled = defaultdict(Tally)
    for (label, a, b), t in tallies.pair.items():
        status = inp.statuses.get(label, {})
        if status.get(a) == "ok" and status.get(b) == "ok":
            pooled[(a, b)] += t
    pairwise = [PairResult(a, b, t.wins, t.draws, t.losses, t.games) for (a, b), t in sorted(pooled.items())]
    elo = {
        "published": standing_published,
        "anchor": None,
        "note": "an ordering only, fitted to the pairwise scores; never a difference to act on",
    }
    if standing_published:
        ratings = fit_elo(inp.names, dict(pooled), anchor=inp.elo_anchor)
        for a in agents:
            a.elo = ratings[a.name]
        elo["anchor"] = "random = 1000" if inp.elo_anchor else "mean = 1000 (random is not in the field)"
    return pairwise, elo
