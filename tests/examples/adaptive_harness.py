"""An in-process stand-in for a round, for the example agents: the engine is the environment.

It drives an agent object exactly as the wire would (docs/protocol.md): `prepare(env_info)`
without the rules; measurement games against the engine's seeded `random` opponent with
colours alternating and no outcome; budget self-play with the agent in both seats and an
outcome after each game; measurement again at each checkpoint; `freeze()`. Observations
come from `Game.observation()` and masks from `Game.legal_mask()`, and the agent is asked to
act only when it has a legal move, as in the arena's game loop.

It is not the arena: no sandbox, no pace enforcement, no faults. It times `act()` calls
in-process (without the wire's framing): a quick version of what `arena round` measures for
examples/adaptive/README.md. Run it directly for a table:

    python tests/examples/adaptive_harness.py --envs public:standard --budget 500
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

if __name__ == "__main__":  # run as a script: the repository root is not on sys.path yet
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from engine import Color, EnvSpec, Game, derive_seed, make_opponent, paper_tier, public_tier  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CHECKPOINTS = (0, 100, 500, 1000, 2000)
GAMES_PER_CHECKPOINT = 20


def load_agent_module(name: str):
    """examples/<name>/agent.py, imported under a private module name (a fresh copy each time)."""
    path = EXAMPLES / name / "agent.py"
    spec = importlib.util.spec_from_file_location(f"example_agent_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and the like look their module up here
    spec.loader.exec_module(module)
    return module


def load_agent_class(name: str) -> type:
    """The `Agent` class of examples/<name>/agent.py."""
    return load_agent_module(name).Agent


def env_info(spec: EnvSpec, budget: int) -> dict:
    """What `prepare` receives: geometry and budget, never the rules (as grader.play.match builds it)."""
    layout = spec.layout
    return {
        "rows": layout.rows,
        "cols": layout.cols,
        "obstacles": [list(c) for c in layout.obstacles],
        "interaction_budget": int(budget),
        "env_index": 0,
        "env_count": 1,
    }


@dataclass
class ActClock:
    """act() calls and the seconds they took, split by kind of game."""

    calls: int = 0
    seconds: float = 0.0
    max_seconds: float = 0.0

    def add(self, seconds: float) -> None:
        self.calls += 1
        self.seconds += seconds
        self.max_seconds = max(self.max_seconds, seconds)

    @property
    def mean_ms(self) -> float:
        return 1000 * self.seconds / self.calls if self.calls else 0.0


@dataclass
class Session:
    """The result of one agent in one environment."""

    env: str
    rules: str
    curve: dict[int, tuple[int, int, int]] = field(default_factory=dict)  # checkpoint -> (W, D, L)
    clock_measured: ActClock = field(default_factory=ActClock)
    clock_all: ActClock = field(default_factory=ActClock)
    illegal: int = 0
    inferred_capture: str | None = None
    inferred_objective: tuple | None = None
    capture_after_first_game: str | None = None

    def win_rate(self, checkpoint: int) -> float:
        w, d, l = self.curve[checkpoint]
        return w / (w + d + l)

    def draw_rate(self, checkpoint: int) -> float:
        w, d, l = self.curve[checkpoint]
        return d / (w + d + l)

    def to_dict(self) -> dict:
        return {
            "env": self.env,
            "rules": self.rules,
            "curve": {str(k): v for k, v in self.curve.items()},
            "mean_act_ms_measured": round(self.clock_measured.mean_ms, 3),
            "mean_act_ms_all": round(self.clock_all.mean_ms, 3),
            "max_act_ms": round(1000 * self.clock_all.max_seconds, 3),
            "illegal": self.illegal,
            "inferred_capture": self.inferred_capture,
            "inferred_objective": self.inferred_objective,
            "capture_after_first_game": self.capture_after_first_game,
        }


def _agent_move(agent, game: Game, clocks: list[ActClock], session: Session) -> None:
    obs, mask = game.observation(), game.legal_mask()
    start = time.perf_counter()
    action = agent.act(obs, mask)
    elapsed = time.perf_counter() - start
    for clock in clocks:
        clock.add(elapsed)
    if isinstance(action, bool) or not isinstance(action, int) or not 0 <= action < mask.size or not mask[action]:
        session.illegal += 1
        game.lose_turn()
    else:
        game.play(action)


def play_measured(agent, spec: EnvSpec, agent_color: Color, seed: int, session: Session) -> Game:
    """One game against the seeded random opponent; no outcome is sent."""
    opponent = make_opponent("random", spec, seed)
    game = Game(spec)
    while not game.done:
        if not game.has_legal_move():
            game.pass_turn()
        elif game.to_move is agent_color:
            _agent_move(agent, game, [session.clock_measured, session.clock_all], session)
        else:
            game.play(opponent.act(game))
    return game


def play_self(agent, spec: EnvSpec, session: Session) -> Game:
    """One budget game with the agent in both seats; the outcome goes to the agent."""
    game = Game(spec)
    while not game.done:
        if not game.has_legal_move():
            game.pass_turn()
        else:
            _agent_move(agent, game, [session.clock_all], session)
    outcome = game.outcome()
    agent.observe_outcome(
        {
            "winner": outcome.winner_label,
            "black_discs": outcome.black_discs,
            "white_discs": outcome.white_discs,
            "your_color": "both",
        }
    )
    return game


def run_session(
    agent_name: str,
    spec: EnvSpec,
    budget: int = 2000,
    checkpoints=CHECKPOINTS,
    games_per_checkpoint: int = GAMES_PER_CHECKPOINT,
    seed: int = 1,
) -> Session:
    """prepare, measure at 0, self-play with a measurement at each checkpoint up to `budget`, freeze."""
    agent = load_agent_class(agent_name)()
    session = Session(env=spec.name or spec.id, rules=spec.rules.label)
    agent.prepare(env_info(spec, budget))
    points = [c for c in checkpoints if c <= budget]
    used = 0
    for point in points:
        while used < point:
            play_self(agent, spec, session)
            used += 1
            if used == 1:
                session.capture_after_first_game = _inferred(agent)[0]
        w = d = l = 0
        for i in range(games_per_checkpoint):
            color = Color.BLACK if i % 2 == 0 else Color.WHITE
            game = play_measured(agent, spec, color, derive_seed(seed, spec.id, point, i), session)
            winner = game.outcome().winner
            if winner is None:
                d += 1
            elif winner is color:
                w += 1
            else:
                l += 1
        session.curve[point] = (w, d, l)
    freeze = getattr(agent, "freeze", None)
    if callable(freeze):
        freeze()
    session.inferred_capture, session.inferred_objective = _inferred(agent)
    return session


def _inferred(agent) -> tuple[str | None, tuple | None]:
    """What the adaptive agent believes (None for agents that infer nothing)."""
    rules, wins = getattr(agent, "rules", None), getattr(agent, "wins", None)
    capture = rules.best()[0] if rules is not None and hasattr(rules, "best") else None
    objective = (
        tuple(round(x, 4) for x in wins.objective()) if wins is not None and hasattr(wins, "objective") else None
    )
    return capture, objective


def select_envs(selectors: list[str]) -> list[EnvSpec]:
    """`public:<layout>` (its 8 rule pairs), `public:<layout>:<win>/<capture>`, `paper:<layout>:<k>`."""
    out = []
    for sel in selectors:
        tier, _, rest = sel.partition(":")
        layout, _, rule = rest.partition(":")
        specs = public_tier() if tier == "public" else paper_tier() if tier == "paper" else None
        if specs is None:
            raise ValueError(f"unknown tier in {sel!r}")
        chosen = []
        for spec in specs:
            # Tier specs are named "<layout> <win>/<capture>" and "paper-<n> <layout> k=<k>".
            words = (spec.name or "").split()
            if (words[0] if tier == "public" else words[1]) != layout:
                continue
            if tier == "public" and rule and f"{spec.rules.win.value}/{spec.rules.capture.value}" != rule:
                continue
            if tier == "paper":
                if spec.rules.turn_limit is not None or (rule and repr(spec.rules.k) != rule):
                    continue
            chosen.append(spec)
        if not chosen:
            raise ValueError(f"{sel!r} selects no environment")
        out.extend(chosen)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", default="adaptive")
    parser.add_argument(
        "--envs", nargs="+", required=True, help="public:<layout>[:<win>/<capture>] or paper:<layout>[:<k>]"
    )
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jsonl", help="append one JSON line per session to this file")
    args = parser.parse_args(argv)
    for spec in select_envs(args.envs):
        start = time.perf_counter()
        session = run_session(args.agent, spec, args.budget, seed=args.seed)
        row = session.to_dict() | {
            "seconds": round(time.perf_counter() - start, 1),
            "budget": args.budget,
            "agent": args.agent,
            "seed": args.seed,
        }
        print(json.dumps(row), flush=True)
        if args.jsonl:
            with open(args.jsonl, "a") as fh:
                fh.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
