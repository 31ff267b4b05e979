"""Every aggregate of a round, computed from per-game outcomes and per-environment statuses.

This is the one place a round's numbers come from: `publish` calls it on the games it just
played, `arena verify` on the games a results file carries (the public projection has enough
for it even when the rules are withheld). Fault rule (design §5): an entrant that faulted in
an environment scores zero there on every metric; a pairing with a faulted opponent is void
for the survivor (out of its numerator and denominator) and zero for the faulted one.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from grader.faults import Payer, kinds
from grader.games import ScoredGame
from grader.metrics import (INTERVAL_ENVIRONMENTS, INTERVAL_ENVIRONMENTS_FLOOR, INTERVAL_WILSON_GAMES, MetricError,
                            Tally, endings_histogram, fit_elo,
                            mean, rnd, sae, sae_window, spread, standing, standing_interval, wilson, win_draw_rates)
from grader.results import AgentMetrics, CurvePoint, EnvAgent, PairResult, Record, SaeValue, Spread, Standing
from grader.schedule import CHECKPOINT_LABEL

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
    games: list[dict]  # stored as a round stores them (grader.games.ScoredGame), full or projected
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
        return list(standing_interval([s for s in scores if s is not None], games,
                                      floor=method == INTERVAL_ENVIRONMENTS_FLOOR))
    # A results document names its method, so `arena verify` brings any word here.
    raise MetricError("method", method, f"unknown interval method {method!r}")


def compute(inp: ScoringInput) -> Scores:
    problems: list[str] = []
    names, labels = inp.names, inp.labels
    known_names, known_labels = set(names), set(labels)
    checkpoint = defaultdict(Tally)  # (label, name, checkpoint) -> the agent's tally
    pair = defaultdict(Tally)  # (label, a, b), a < b -> a's tally against b
    endings: dict[str, list[str]] = {n: [] for n in names}
    for i, g in enumerate(map(ScoredGame.from_doc, inp.games)):
        where = f"game {i} ({g.env} {g.phase} {g.black} v {g.white} #{g.index})"
        if g.env not in known_labels:
            problems.append(f"{where}: unknown environment {g.env!r}")
            continue
        players = [p for p in (g.black, g.white) if p != CHECKPOINT_LABEL]
        if any(p not in known_names for p in players):
            problems.append(f"{where}: a player is not in the field")
            continue
        for p in players:
            endings[p].append(g.ending)
        if g.phase == "checkpoint":
            if len(players) != 1 or g.checkpoint not in inp.checkpoints:
                problems.append(f"{where}: not a checkpoint game of this round")
                continue
            key = (g.env, players[0], g.checkpoint)
            checkpoint[key] = checkpoint[key].add(result_for(g, players[0]))
        else:
            if len(players) != 2 or players[0] == players[1]:
                problems.append(f"{where}: a pairing game needs two entrants")
                continue
            a, b = sorted(players)
            key = (g.env, a, b)
            pair[key] = pair[key].add(result_for(g, a))

    window = sae_window(inp.checkpoints)
    env_agents: dict[str, list[EnvAgent]] = {}
    per_agent: dict[str, dict[str, list]] = {n: defaultdict(list) for n in names}
    for label in labels:
        status = inp.statuses.get(label, {})
        live = [n for n in names if status.get(n) == "ok"]
        rows = []
        for name in names:
            st = status.get(name)
            if st is None:
                problems.append(f"environment {label}: no status for {name}")
                st = "ok"
            faulted = st != "ok"
            curve, rates = [], []
            for b in inp.checkpoints:
                t = checkpoint[(label, name, b)]
                if not faulted and t.games != inp.games_per_checkpoint:
                    problems.append(f"environment {label}: {name} has {t.games} checkpoint games at {b}, "
                                    f"expected {inp.games_per_checkpoint}")
                w, d = (0.0, 0.0) if faulted else win_draw_rates(t)
                curve.append(CurvePoint(b, w, d))
                rates.append(w)
            env_sae = sae(inp.checkpoints, rates).value
            opponents = [o for o in live if o != name]
            tally = Tally()
            for o in opponents:
                a, b = sorted((name, o))
                t = pair[(label, a, b)]
                if not faulted and t.games != inp.pairing_games:
                    problems.append(f"environment {label}: pairing {a} v {b} has {t.games} games, "
                                    f"expected {inp.pairing_games}")
                if not faulted:
                    tally += t if a == name else Tally(t.losses, t.draws, t.wins)
            if faulted:
                score = 0.0
                per_agent[name]["faulted_games"].append(inp.pairing_games * len(opponents))
                per_agent[name]["faults"].append(st)
            else:
                score = rnd(tally.points / tally.games) if tally.games else None
            per_agent[name]["tally"].append(tally)
            per_agent[name]["score"].append(score)
            per_agent[name]["curve"].append(curve)
            per_agent[name]["sae"].append(env_sae)
            rows.append(EnvAgent(name, st, curve, env_sae, score, _record(tally), {}))
        env_agents[label] = rows

    standing_published = len(names) >= MIN_FIELD_FOR_STANDING
    agents = []
    for name in names:
        data = per_agent[name]
        curve = [CurvePoint(b, rnd(mean([c[j].win_rate for c in data["curve"]])),
                            rnd(mean([c[j].draw_rate for c in data["curve"]])))
                 for j, b in enumerate(inp.checkpoints)] if labels else []
        sae_value = rnd(mean(data["sae"])) if window and labels else None
        total = Tally()
        for t in data["tally"]:
            total += t
        faulted_games = sum(data["faulted_games"])
        value = standing(data["score"])
        standing_row = None
        if standing_published and value is not None:
            standing_row = Standing(value, 0, faulted_games,
                                    _interval(inp.interval_method, data["score"], total.games + faulted_games),
                                    None if inp.interval_method == INTERVAL_WILSON_GAMES else inp.interval_method)
        faults = {k: data["faults"].count(k) for k in AGENT_FAULT_KINDS}
        final_rates = [c[-1].win_rate for c in data["curve"]]
        agents.append(AgentMetrics(
            name=name, curve=curve, sae=SaeValue(sae_value, *(window or (None, None))), record=_record(total),
            standing=standing_row, elo=None, faulted_envs=len(data["faults"]), faults=faults,
            endings=endings_histogram(endings[name]),
            spread=Spread(spread(final_rates), spread([s for s in data["sae"] if s is not None]),
                          spread([s for s in data["score"] if s is not None]))))

    # Ranks: by standing, ties share the better rank (1, 2, 2, 4).
    ranked = sorted((a for a in agents if a.standing), key=lambda a: -a.standing.value)
    for a in ranked:
        a.standing.rank = 1 + sum(1 for b in ranked if b.standing.value > a.standing.value)

    pooled = defaultdict(Tally)
    for (label, a, b), t in pair.items():
        status = inp.statuses.get(label, {})
        if status.get(a) == "ok" and status.get(b) == "ok":
            pooled[(a, b)] += t
    pairwise = [PairResult(a, b, t.wins, t.draws, t.losses, t.games) for (a, b), t in sorted(pooled.items())]
    elo = {"published": standing_published, "anchor": None,
           "note": "an ordering only, fitted to the pairwise scores; never a difference to act on"}
    if standing_published:
        ratings = fit_elo(names, dict(pooled), anchor=inp.elo_anchor)
        for a in agents:
            a.elo = ratings[a.name]
        elo["anchor"] = "random = 1000" if inp.elo_anchor else "mean = 1000 (random is not in the field)"
    return Scores(agents, pairwise, env_agents, elo, standing_published, problems)
