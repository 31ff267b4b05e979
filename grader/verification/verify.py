"""Re-verify a published round from its own files: `arena verify rounds/<round-id>.yaml`.

Each check is a function of one `Context` that returns its notes (what it could not check) and
raises `Difference` at the first mismatch; `FILE_CHECKS` and `PRIVATE_CHECKS` run in order, and
the first difference stops the run. docs/results.md lists what is checked and what cannot be.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from engine import (
    LOST,
    PASS,
    Color,
    EnvSpec,
    Game,
    IllegalMoveError,
    ReplayError,
    SpecError,
    parse_spec,
    replay,
    tier_specs,
)
from engine.opponents import seated_opponent
from engine.tiers import DEFAULT_GENERATED_COUNT
from grader.common.limits import Limits
from grader.common.metrics import INTERVAL_ENVIRONMENTS_FLOOR, INTERVAL_WILSON_GAMES, generalisation_gap
from grader.common.policy import SESSION_END_KINDS
from grader.common.schedule import CHECKPOINT_LABEL, CHECKPOINT_OPPONENT, checkpoint_seed, pairing_seed, self_play_seed
from grader.play.games import KeptGame, ScoredGame
from grader.play.session import REFERENCE_NAMES, Entrant
from grader.rounds.aggregates import MIN_ENVS_FOR_PUBLIC, MIN_FIELD_FOR_STANDING, ScoringInput, compute
from grader.rounds.orchestrate import HIDDEN_TIERS, public_round_baseline
from grader.rounds.plan import EnvEntry, PlanError, RoundPlan, commitment, order_envs, read_plan
from grader.rounds.publish import config_of, round_notes
from grader.rounds.records import read_record, record_path, self_play_digest
from grader.rounds.results import ResultsError, check_twin, load_games, load_results
from grader.rounds.seeds import int_seed
from grader.season.disclosure import (
    PROFILES,
    RULE_BEARING_GAME_KEYS,
    Disclosure,
    profile_for,
    project_games,
    project_result,
)


class Difference(Exception):
    """The first thing that does not match, as `where: what`."""


@dataclass
class Report:
    path: Path
    games: int = 0
    replayed: int = 0
    self_play_checked: int = 0  # self-play games replayed and their outcome sent checked (--private)
    numbers: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass
class Context:
    """What every check reads: one results file, its games, the report it adds to, and (with
    `--private DIR`) the staff record and its games."""

    path: Path
    data: dict
    games: list[dict]
    report: Report
    private: Path | None = None
    full: dict | None = None
    full_games: list[dict] | None = None


# A check: it returns its notes and raises Difference at the first mismatch it finds.
Check = Callable[[Context], list[str]]


def first_difference(stored: Any, computed: Any, path: str = "") -> str | None:
    """The path of the first place two documents differ, with both values; None when equal."""
    if isinstance(stored, dict) and isinstance(computed, dict):
        for key in list(stored) + [k for k in computed if k not in stored]:
            if key not in stored or key not in computed:
                return f"{path}.{key}: present in only one of file and recomputation".lstrip(".")
            diff = first_difference(stored[key], computed[key], f"{path}.{key}")
            if diff:
                return diff
        return None
    if isinstance(stored, list) and isinstance(computed, list):
        if len(stored) != len(computed):
            return f"{path}: the file has {len(stored)} entries, recomputed {len(computed)}".lstrip(".")
        for i, (a, b) in enumerate(zip(stored, computed)):
            diff = first_difference(a, b, f"{path}[{i}]")
            if diff:
                return diff
        return None
    if type(stored) is not type(computed) and not (
        isinstance(stored, (int, float))
        and isinstance(computed, (int, float))
        and not isinstance(stored, bool)
        and not isinstance(computed, bool)
    ):
        return f"{path}: the file says {stored!r}, recomputed {computed!r}".lstrip(".")
    if stored != computed:
        return f"{path}: the file says {stored!r}, recomputed {computed!r}".lstrip(".")
    return None


def _count_numbers(value: Any) -> int:
    if isinstance(value, dict):
        return sum(_count_numbers(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count_numbers(v) for v in value)
    return 1 if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def replay_game(spec, game: ScoredGame, references: dict[str, str]) -> None:
    """Replay one stored game; raise Difference on any mismatch. `references` maps a seat's
    player name to the reference opponent that played it (re-played from the game seed)."""
    moves, seed = game.moves, game.seed
    if moves is None or seed is None:
        raise Difference("its moves or seed are withheld: it cannot be replayed")
    opponents = {}
    for color in (Color.BLACK, Color.WHITE):
        name = references.get(game.seat(color.label))
        if name is not None:
            opponents[color] = seated_opponent(name, spec, seed, color.label)
    g = Game(spec)
    for i, move in enumerate(moves):
        if g.done:
            raise Difference(f"move {i} ({move!r}): the game was already over")
        if move != PASS and move != LOST:
            if not isinstance(move, int):
                raise Difference(f"move {i}: {move!r} is not a cell, pass or lost")
            opponent = opponents.get(g.to_move)
            if opponent is not None:
                expected = opponent.act(g)
                if expected != move:
                    raise Difference(
                        f"move {i}: {game.seat(g.to_move.label)} plays {expected} from its seed, the file says {move}"
                    )
        try:
            g.apply(move)
        except IllegalMoveError as exc:
            raise Difference(f"move {i} ({move!r}): {exc}") from None
    if game.forfeit is not None:
        if g.done:
            raise Difference("a forfeit is recorded but the game was already over")
        g.forfeit(Color.BLACK if game.forfeit == "black" else Color.WHITE)
    if not g.done:
        raise Difference(f"the game is not over after {len(moves)} moves")
    out = g.outcome()
    found = {
        "termination": out.termination.value,
        "winner": None if out.winner is None else out.winner.label,
        "black_discs": out.black_discs,
        "white_discs": out.white_discs,
    }
    for key, value in found.items():
        if getattr(game, key) != value:
            raise Difference(f"{key}: the file says {getattr(game, key)!r}, the replay gives {value!r}")
    expected_endings = {"forfeit", "fault"} if game.forfeit else {found["termination"]}
    if game.ending not in expected_endings:
        raise Difference(f"ending {game.ending!r} does not fit a game that ended by {found['termination']}")


def check_games(ctx: Context) -> list[str]:
    """Replay every game that carries moves; re-derive seeds where the round seed is public."""
    data, games, report = ctx.data, ctx.games, ctx.report
    envs = {e["label"]: e for e in data["environments"]}
    seed = data["provenance"]["config"]["seed"]
    refs = {f["name"]: f["digest"].split(":", 1)[1] for f in data["field"] if f["kind"] == "reference"}
    refs[CHECKPOINT_LABEL] = CHECKPOINT_OPPONENT
    specs = {}
    for i, game in enumerate(map(ScoredGame.from_doc, games)):
        where = f"game {i + 1} ({game.env} {game.phase} {game.black} v {game.white} #{game.index})"
        env = envs.get(game.env)
        if env is None:
            raise Difference(f"{where}: environment {game.env!r} is not in the results file")
        if game.moves is None:
            continue
        if env["spec"] is None:
            raise Difference(f"{where}: moves are stored but the environment's spec is not")
        if game.env not in specs:
            try:
                specs[game.env] = parse_spec(env["spec"])
            except SpecError as exc:
                raise Difference(f"environments {game.env}: {exc}") from None
            if specs[game.env].id != env["id"]:
                raise Difference(
                    f"environments {game.env}: the spec's id is {specs[game.env].id}, the file says {env['id']}"
                )
        spec = specs[game.env]
        if seed is not None:
            if game.phase == "checkpoint":
                if game.checkpoint is None:
                    raise Difference(f"{where}: a checkpoint game names no checkpoint")
                want = checkpoint_seed(seed, spec.id, game.checkpoint, game.index)
            else:
                a, b = sorted((game.black, game.white))
                want = pairing_seed(seed, spec.id, a, b, game.index)
            if game.seed != want:
                raise Difference(f"{where}: seed {game.seed} is not the one its place derives ({want})")
        try:
            replay_game(spec, game, refs)
        except Difference as exc:
            raise Difference(f"{where}: {exc}") from None
        report.replayed += 1
    return []


def interval_method(data: dict) -> str:
    """The standing's interval method a results document states: every published standing names
    the same one, or none does (a round written before methods were named: Wilson's over games)."""
    methods = {a["standing"].get("method") for a in data["agents"] if a["standing"] is not None}
    if len(methods) > 1:
        raise Difference(f"agents: standings name different interval methods ({', '.join(sorted(map(str, methods)))})")
    method = methods.pop() if methods else INTERVAL_ENVIRONMENTS_FLOOR
    return INTERVAL_WILSON_GAMES if method is None else method


def recompute(data: dict, games: list[dict]) -> dict:
    """The part of a results document that follows from its games, recomputed."""
    config = data["provenance"]["config"]
    names = [f["name"] for f in data["field"]]
    anchor = next(
        (f["name"] for f in data["field"] if f["kind"] == "reference" and f["digest"] == "reference:random"), None
    )
    statuses = {e["label"]: {a["name"]: a["status"] for a in e["agents"]} for e in data["environments"]}
    scores = compute(
        ScoringInput(
            names,
            [e["label"] for e in data["environments"]],
            config["checkpoints"],
            config["games_per_checkpoint"],
            config["pairing_games"],
            statuses,
            games,
            anchor,
            interval_method(data),
        )
    )
    if scores.problems:
        raise Difference(f"games: {scores.problems[0]}")
    stored_gaps = {a["name"]: a["generalisation_gap"] for a in data["agents"]}
    agents = []
    for a in scores.agents:
        a.generalisation_gap = stored_gaps.get(a.name)  # checked apart, against the public round
        row = asdict(a)
        if row["standing"] is not None and row["standing"]["method"] is None:
            del row["standing"]["method"]  # a round from before methods were named
        agents.append(row)
    envs = []
    for env in data["environments"]:
        rows = []
        for env_agent, stored in zip(scores.env_agents[env["label"]], env["agents"]):
            env_agent.self_play = stored["self_play"]  # self-play is summarised, not stored: nothing to recompute
            rows.append(asdict(env_agent))
        envs.append(rows)
    return {
        "agents": agents,
        "pairwise": [asdict(p) for p in scores.pairwise],
        "elo": scores.elo,
        "environment_agents": envs,
        "standing_published": scores.standing_published,
    }


def check_numbers(ctx: Context) -> list[str]:
    """The round's flags from its size, and every number of the file recomputed from its games."""
    data, games = ctx.data, ctx.games
    config = data["provenance"]["config"]
    if config["environments"] != len(data["environments"]):
        raise Difference(
            f"provenance.config.environments: the file says {config['environments']}, "
            f"it lists {len(data['environments'])}"
        )
    info = data["round"]
    requested = bool(config.get("requested"))  # a requested run is private whatever its size
    small = len(data["environments"]) < MIN_ENVS_FOR_PUBLIC or len(data["field"]) < MIN_FIELD_FOR_STANDING
    for key, want in (
        ("private", small or requested),  # grader/rounds/publish.py's rule
        ("research", info["tier"] == "paper"),
        ("standing_published", len(data["field"]) >= MIN_FIELD_FOR_STANDING),
    ):
        if info[key] != want:
            raise Difference(f"round.{key}: the file says {info[key]!r}, the round's size gives {want!r}")
    leaderboard = info["tier"] in HIDDEN_TIERS and not info["private"] and info["standing_published"]
    if info["leaderboard"] != leaderboard:
        raise Difference(
            f"round.leaderboard: the file says {info['leaderboard']!r}; only a complete ladder or final "
            f"round that is not private and has a standing is on it, which gives {leaderboard!r}"
        )
    got = recompute(data, games)
    stored = {
        "agents": data["agents"],
        "pairwise": data["pairwise"],
        "elo": data["elo"],
        "environment_agents": [e["agents"] for e in data["environments"]],
        "standing_published": info["standing_published"],
    }
    diff = first_difference(stored, got)
    if diff:
        raise Difference(diff.replace("environment_agents[", "environments[agents of "))
    ctx.report.numbers += _count_numbers(stored)
    return []


def check_gap(ctx: Context) -> list[str]:
    """Each agent's generalisation gap against the public round the file names (beside it)."""
    path, data = ctx.path, ctx.data
    ref = data["provenance"]["config"]["public_round"]
    if ref is None:
        return []
    other = public_round_file(path, ref)
    if not other.exists():
        raise Difference(
            f"provenance.config.public_round: {other.name} is not beside this file, so the "
            "generalisation gaps it gives cannot be checked"
        )
    digest = "sha256:" + hashlib.sha256(other.read_bytes()).hexdigest()
    if digest != ref["sha256"]:
        raise Difference(f"provenance.config.public_round.sha256: {other.name} hashes to {digest}")
    public = load_results(other)
    digests = {f["name"]: f["digest"] for f in data["field"]}
    base = {f["digest"]: a for a in public["agents"] for f in public["field"] if f["name"] == a["name"]}
    for i, agent in enumerate(data["agents"]):
        b = base.get(digests[agent["name"]])
        want = (
            None
            if b is None
            else {
                "public_round": ref["id"],
                "final_win_rate": generalisation_gap(
                    b["curve"][-1]["win_rate"] if b["curve"] else None,
                    agent["curve"][-1]["win_rate"] if agent["curve"] else None,
                ),
                "sae": generalisation_gap(b["sae"]["value"], agent["sae"]["value"]),
            }
        )
        diff = first_difference(agent["generalisation_gap"], want, f"agents[{i}].generalisation_gap")
        if diff:
            raise Difference(diff)
    return []


def public_round_file(path: Path, ref: dict) -> Path:
    """Where the public round a results file refers to is looked for: beside it."""
    return path.parent / f"{ref['id']}.yaml"


def stated_plan(path: Path, data: dict) -> tuple[RoundPlan | None, str]:
    """The round plan that a results file states (configuration, limits, field, environments,
    versions), or None and why the file cannot restate it. The round id is a hash of this
    plan, so a change to any of them shows as a different id."""
    config, provenance = data["provenance"]["config"], data["provenance"]
    # `check_disclosed` has held each of these to the tier and profile: none is the file's choice.
    if provenance["tier_seed_commitment"] is not None:
        return None, "the tier was generated from a secret seed"
    if config["seed"] is None or any(e["spec"] is None for e in data["environments"]):
        return None, "the tier withholds its rules and the round seed"
    public_round = None
    if config["public_round"] is not None:
        other = public_round_file(path, config["public_round"])
        if not other.exists():
            raise Difference(
                f"provenance.config.public_round: {other.name} is not beside this file, and the "
                "round id cannot be recomputed without it"
            )
        public_round = public_round_baseline(other)
    try:
        envs = tuple(
            EnvEntry(i, e["label"], dataclasses.replace(parse_spec(e["spec"]), name=e["name"]))
            for i, e in enumerate(data["environments"])
        )
        field = tuple(Entrant(f["name"], f["kind"], "", f["digest"], f["account"]) for f in data["field"])
        plan = RoundPlan(
            tier=config["tier"],
            envs=envs,
            field=field,
            budget=config["budget"],
            checkpoints=tuple(config["checkpoints"]),
            games_per_checkpoint=config["games_per_checkpoint"],
            pairing_games=config["pairing_games"],
            seed=config["seed"],
            tier_seed=None,
            limits=Limits(**provenance["limits"]),
            sandbox=config["sandbox"],
            disclosure=config["disclosure"],
            commit=provenance["commit"],
            arena_version=provenance["arena_version"],
            arena_retries=config["arena_retries"],
            max_arena_faults=config["max_arena_faults"],
            public_round=public_round,
            requested=bool(config.get("requested")),
        )
    except (SpecError, ValueError, TypeError) as exc:
        raise Difference(f"provenance: the stated configuration is not a round's: {exc}") from None
    return plan, ""


def check_disclosed(ctx: Context) -> list[str]:
    """What the file withholds or publishes follows from its tier, never from its own fields:
    the tier says whether it was generated from a seed (a public or paper tier has no tier
    seed, a ladder or final tier always has one) and which public profile it has; the profile
    says whether the round seed, the environments and the move lists are published, and where
    the seed is stated its commitment must be the seed's. A field that could say "withheld"
    of its own accord would switch the checks that need it off."""
    data, games = ctx.data, ctx.games
    config, provenance, info = data["provenance"]["config"], data["provenance"], data["round"]
    tier = config["tier"]
    if info["tier"] != tier or not info["id"].startswith(f"{tier}-"):
        raise Difference(
            f"round.tier: the file says {info['tier']!r} (id {info['id']}), its configuration says {tier!r}"
        )
    if info["status"] != "complete":
        raise Difference(f"round.status: {info['status']!r}; only a complete round is published")
    generated = tier in HIDDEN_TIERS
    if (provenance["tier_seed_commitment"] is not None) != generated:
        raise Difference(
            f"provenance.tier_seed_commitment: the file says {provenance['tier_seed_commitment']!r}; "
            f"the {tier} tier "
            + (
                "is generated from a secret seed, whose commitment it must give"
                if generated
                else "is not generated: it has no tier seed (null)"
            )
        )
    public = profile_for(tier, ladder_rules_public=config["disclosure"] == "open")
    if config["disclosure"] != public.name:
        raise Difference(
            f"provenance.config.disclosure: the file says {config['disclosure']!r}, a {tier} round "
            f"is published with the {public.name!r} profile"
        )
    if data["disclosure"]["profile"] not in ("full", public.name):
        raise Difference(
            f"disclosure.profile: the file says {data['disclosure']['profile']!r}; a {tier} round is "
            f"the full record or its {public.name!r} projection"
        )
    profile = PROFILES[data["disclosure"]["profile"]]
    word = "publishes" if profile.rules else "withholds"
    seed = config["seed"]
    if (seed is None) == profile.rules:
        raise Difference(
            f"provenance.config.seed: the file says {seed!r}; the {profile.name} profile {word} the round seed"
        )
    if seed is not None and provenance["seed_commitment"] != commitment("round", seed):
        raise Difference(
            f"provenance.seed_commitment: the file says {provenance['seed_commitment']}, the "
            f"commitment of the stated seed is {commitment('round', seed)}"
        )
    if (config["env_ids"] is None) == profile.rules:
        raise Difference(f"provenance.config.env_ids: the {profile.name} profile {word} the environment ids")
    for i, env in enumerate(data["environments"]):
        for key in ("id", "spec"):
            if (env[key] is None) == profile.rules:
                raise Difference(f"environments[{i}].{key}: the {profile.name} profile {word} it")
        if not profile.rules and env["name"] is not None:
            raise Difference(f"environments[{i}].name: the {profile.name} profile withholds it")
    for n, game in enumerate(games, 1):
        present = [k for k in RULE_BEARING_GAME_KEYS if k in game]
        if present != (list(RULE_BEARING_GAME_KEYS) if profile.rules else []):
            missing = [k for k in RULE_BEARING_GAME_KEYS if k not in game]
            raise Difference(
                f"game {n} ({game['env']} {game['phase']} #{game['index']}): the {profile.name} "
                f"profile {word} {', '.join(missing if profile.rules else present)}"
            )
    return []


SESSION_END_VALUES = tuple(sorted(kind.value for kind in SESSION_END_KINDS))


def check_statuses(ctx: Context) -> list[str]:
    """Each entrant's status and self-play count in each environment, held to its games there.
    A round plays an entrant's checkpoint games in order, then its pairings; a fault ends it.
    So a game that ended by a side's fault names a side that is not `ok` and plays no more
    there; a faulted entrant's games are a prefix of an `ok` one's (the checkpoints before the
    one it died in complete, nothing after, pairings only once every checkpoint is complete);
    and its self-play count lies where its checkpoint games stop (self-play runs between them).
    An `ok` entrant's complete games are checked with the numbers (`recompute`)."""
    data, games = ctx.data, ctx.games
    config = data["provenance"]["config"]
    checkpoints, per_checkpoint, budget = config["checkpoints"], config["games_per_checkpoint"], config["budget"]
    by_env: dict[str, list[tuple[int, ScoredGame]]] = {}
    for n, game in enumerate(map(ScoredGame.from_doc, games), 1):
        by_env.setdefault(game.env, []).append((n, game))
    for e, env in enumerate(data["environments"]):
        env_games = by_env.get(env["label"], [])
        rows = {a["name"]: (i, a) for i, a in enumerate(env["agents"])}
        last = {}  # entrant -> number of its last game here
        for n, g in env_games:
            for p in (g.black, g.white):
                last[p] = n
        died_in = set()  # entrants a game may have ended by the fault of
        for n, g in env_games:
            if g.ending != "fault":
                continue
            side = g.forfeit
            dead = [g.seat(side)] if side else [p for p in (g.black, g.white) if p != CHECKPOINT_LABEL]
            died_in.update(dead)
            if all(p in rows and rows[p][1]["status"] == "ok" for p in dead):
                raise Difference(
                    f"environments[{e}].agents[{rows[dead[0]][0] if dead[0] in rows else '?'}].status: "
                    f"game {n} ended by a fault of {' or '.join(dead)}, whose status is 'ok'"
                )
            if len(dead) == 1 and last.get(dead[0], n) > n:
                raise Difference(
                    f"environments[{e}].agents[{rows[dead[0]][0]}].status: game {n} ended by "
                    f"{dead[0]}'s fault, yet it plays game {last[dead[0]]} after it"
                )
        for name, (a, row) in rows.items():
            where = f"environments[{e}].agents[{a}]"
            mine = [g for _, g in env_games if name in (g.black, g.white)]
            counts = Counter(g.checkpoint for g in mine if g.phase == "checkpoint")
            paired = any(g.phase == "pairing" for g in mine)
            complete = 0
            while complete < len(checkpoints) and counts[checkpoints[complete]] == per_checkpoint:
                complete += 1
            if complete < len(checkpoints):
                later = [c for c in checkpoints[complete + 1 :] if counts[c]]
                if later or paired:
                    raise Difference(
                        f"{where}.status: {name} has {counts[checkpoints[complete]]} of "
                        f"{per_checkpoint} checkpoint games at {checkpoints[complete]} but plays on "
                        f"({'at checkpoint ' + str(later[0]) if later else 'its pairings'})"
                    )
            live = [o for o, (_, r) in rows.items() if o != name and r["status"] == "ok"]
            played = Counter(g.black if g.white == name else g.white for g in mine if g.phase == "pairing")
            if (
                row["status"] not in ("ok", *SESSION_END_VALUES)
                and complete == len(checkpoints)
                and name not in died_in
                and live
                and all(played[o] == config["pairing_games"] for o in live)
            ):
                # A fault stops an entrant before a pairing, or ends the game it came in by its fault,
                # unless the session's end gave it (the pace of a phase, the CPU share), after every game.
                raise Difference(
                    f"{where}.status: the file says {row['status']!r}, but {name} played every "
                    "game of its schedule to its end and no game ended by its fault (only "
                    f"{' or '.join(SESSION_END_VALUES)} is given after the last game)"
                )
            sp = row["self_play"]["games"]
            if complete == len(checkpoints):
                low = high = budget
            elif counts[checkpoints[complete]] or complete == 0:
                low = high = checkpoints[complete]  # it died in this checkpoint's games
            else:
                low, high = checkpoints[complete - 1], checkpoints[complete]  # in the self-play before it
            if not low <= sp <= high:
                stop = "every checkpoint" if complete == len(checkpoints) else f"checkpoint {checkpoints[complete]}"
                raise Difference(
                    f"{where}.self_play.games: {sp} self-play games, but {name}'s checkpoint games "
                    f"stop at {stop}, which gives " + (f"{low}" if low == high else f"{low}..{high}")
                )
    return []


def check_statement(ctx: Context) -> list[str]:
    """What the file says about the round itself, wherever it follows from the rest: the round
    id (a hash of the configuration, limits, field and environments stated), the environment
    ids, the disclosure's description, the notes, and the self-play summaries' arithmetic.
    The summaries themselves (self-play games are not stored) and how the round was run
    (`provenance.execution`) are not recomputable."""
    path, data = ctx.path, ctx.data
    config, info = data["provenance"]["config"], data["round"]
    ids = [e["id"] for e in data["environments"]]
    if config["env_ids"] is not None and config["env_ids"] != ids:
        raise Difference(f"provenance.config.env_ids: the file says {config['env_ids']}, its environments are {ids}")
    for i, entrant in enumerate(data["field"]):
        if entrant["kind"] == "reference" and (
            entrant["name"] not in REFERENCE_NAMES or entrant["digest"] != f"reference:{entrant['name']}"
        ):
            raise Difference(
                f"field[{i}]: a reference entrant is one of {', '.join(REFERENCE_NAMES)}, with the "
                f"digest reference:<name>; the file says {entrant['name']!r}, {entrant['digest']!r}"
            )
    profile = PROFILES[data["disclosure"]["profile"]]
    if data["disclosure"]["description"] != profile.describe():
        raise Difference(
            f"disclosure.description: the file says {data['disclosure']['description']!r}, "
            f"the {profile.name} profile is {profile.describe()!r}"
        )
    notes = round_notes(
        info["tier"],
        len(data["environments"]),
        len(data["field"]),
        info["standing_published"],
        bool(config.get("requested")),
    )
    diff = first_difference(info["notes"], notes, "round.notes")
    if diff:
        raise Difference(diff)
    for e, env in enumerate(data["environments"]):
        for a, row in enumerate(env["agents"]):
            check_self_play(row, config["budget"], f"environments[{e}].agents[{a}].self_play")
    faults = data["provenance"]["execution"]["arena_faults"]
    if len(faults) > config["max_arena_faults"]:
        raise Difference(
            f"provenance.config.max_arena_faults: {len(faults)} arena faults are recorded, more than "
            f"the {config['max_arena_faults']} a published round allows"
        )
    for label, count in Counter(f["env"] for f in faults).items():
        if count > config["arena_retries"]:
            raise Difference(
                f"provenance.config.arena_retries: environment {label} is recorded after {count} "
                f"arena faults, more than the {config['arena_retries']} retries allowed"
            )
    plan, why = stated_plan(path, data)
    if plan is None:
        return [f"round id not recomputed: {why}"]
    if plan.round_id != info["id"]:
        raise Difference(
            f"round.id: the file says {info['id']}, the configuration, limits, field and "
            f"environments it states give {plan.round_id}"
        )
    return []


def check_self_play(row: dict, budget: int, where: str) -> None:
    """A self-play summary adds up: its games within the budget (all of it unless the entrant
    faulted there), and wins and draws that sum to its games."""
    sp = row["self_play"]
    games = sp["games"]
    if games > budget or (row["status"] == "ok" and games != budget):
        raise Difference(
            f"{where}.games: {games} self-play games for an entrant whose status is "
            f"{row['status']!r}, with a budget of {budget}"
        )
    if "black_wins" not in sp:
        return  # the profile publishes only the count
    if sp["black_wins"] + sp["white_wins"] + sp["draws"] != games:
        raise Difference(
            f"{where}: black_wins + white_wins + draws is "
            f"{sp['black_wins'] + sp['white_wins'] + sp['draws']}, not its {games} games"
        )
    if (sp["mean_plies"] is None) != (games == 0):
        raise Difference(f"{where}.mean_plies: {sp['mean_plies']!r} for {games} games")


def check_twin_file(ctx: Context) -> list[str]:
    """The results file's JSON twin, if any, is bound to the YAML's bytes and holds its document."""
    twin = check_twin(ctx.path, ctx.data)
    if twin:
        raise Difference(twin[0])
    return []


def check_tier_of_file(ctx: Context) -> list[str]:
    """The environments a fixed tier's file states are its tier's (a generated tier's: with the staff plan)."""
    tier = ctx.data["round"]["tier"]
    if tier not in HIDDEN_TIERS and all(e["spec"] is not None for e in ctx.data["environments"]):
        check_tier(tier, stated_envs(ctx.data), tier_specs(tier))
    return []


def check_replayable(ctx: Context) -> list[str]:
    """A note when the tier withholds every game's moves, so that none was replayed here."""
    if all("moves" not in g for g in ctx.games):
        return ["the tier withholds its rules: games were not replayed here (give --private DIR)"]
    return []


def check_projection(ctx: Context) -> list[str]:
    """The public file and its games are exactly the staff record's projection by its profile."""
    assert ctx.full is not None and ctx.full_games is not None
    profile = PROFILES[ctx.data["disclosure"]["profile"]]
    projected = project_result(ctx.full, profile)
    projected["games"] = ctx.data["games"]
    diff = first_difference(ctx.data, projected)
    if diff:
        raise Difference(f"the public file is not the projection of the staff record: {diff}")
    public_games = project_games(ctx.full_games, profile)
    diff = first_difference(ctx.games, public_games, "games")
    if diff:
        raise Difference(f"the public games are not the projection of the staff games: {diff}")
    return []


def run_checks(checks: list[Check], ctx: Context) -> None:
    """Run checks in order, adding their notes to the report; the first Difference stops them."""
    for check in checks:
        ctx.report.notes.extend(check(ctx))


def verify_file(path: Path, report: Report) -> Context:
    """Load a results file and its games and run every file check on them."""
    try:
        data = load_results(path, prefer_twin=False)  # the YAML is what is audited; its twin must agree
        games = load_games(path, data)
    except ResultsError as exc:
        raise Difference(f"{exc.args[0].splitlines()[0]} {exc.problems[0]}") from None
    report.games += len(games)
    ctx = Context(path, data, games, report)
    run_checks(FILE_CHECKS, ctx)
    return ctx


def verify(path: str | Path, private: str | Path | None = None) -> Report:
    """Verify a results file (and its staff record); raises Difference at the first mismatch."""
    path = Path(path)
    report = Report(path)
    ctx = verify_file(path, report)
    if private is None:
        # Only without the staff record: with it, every game is replayed from the full record.
        run_checks([check_replayable], ctx)
        return report
    full_path = Path(private) / path.name
    if not full_path.exists():
        raise Difference(f"--private: no staff record {full_path}")
    staff = Report(full_path)
    full = verify_file(full_path, staff)
    report.replayed += staff.replayed
    ctx.private, ctx.full, ctx.full_games = Path(private), full.data, full.games
    run_checks(PRIVATE_CHECKS, ctx)
    return report


def check_records(ctx: Context) -> list[str]:
    """The staff record against the environment records it was built from (`<private>/<round-id>/
    envs/`, as `arena round --private-out` leaves them): each environment's games, every
    entrant's status (its fault's kind) and self-play summary, exactly; and where the round's
    plan is there too (`plan.json`, which holds the seeds), the round id, each record's plan
    key and both seed commitments."""
    assert ctx.private is not None and ctx.full is not None and ctx.full_games is not None
    full, full_games, report = ctx.full, ctx.full_games, ctx.report
    work = ctx.private / full["round"]["id"]
    envs = full["environments"]
    paths = [record_path(work, i) for i in range(len(envs))]
    if not any(p.exists() for p in paths):
        return [f"no environment records in {work}: statuses and self-play checked against the games only"]
    by_env: dict[str, list[dict]] = {}
    for game in full_games:
        by_env.setdefault(game["env"], []).append(game)
    plan = None
    plan_path = work / "plan.json"
    if plan_path.exists():
        try:
            plan = read_plan(plan_path)
        except PlanError as exc:
            raise Difference(f"--private: {exc}") from None
        check_plan(plan, full)
        if plan.tier in HIDDEN_TIERS:
            check_plan_tier(plan)
    kinds = {f["name"]: f["kind"] for f in full["field"]}
    for i, (env, path) in enumerate(zip(envs, paths)):
        where = f"environments[{i}]"
        try:
            record = read_record(path)
        except (ValueError, FileNotFoundError) as exc:
            raise Difference(f"--private: {where} ({env['label']}): {exc}") from None
        if plan is not None and record.plan_key != plan.key():
            raise Difference(f"--private: {path} was recorded for another plan than {plan_path}")
        if (record.label, record.env_id) != (env["label"], env["id"]):
            raise Difference(
                f"{where}: the staff record has {env['label']} {env['id']}, its environment record "
                f"{record.label} {record.env_id}"
            )
        diff = first_difference(by_env.get(env["label"], []), record.games, f"{where} games")
        if diff:
            raise Difference(f"the staff games are not those of the environment records: {diff}")
        spec = None  # parsed once, for the first agent with kept self-play games
        for a, row in enumerate(env["agents"]):
            entrant = record.entrants.get(row["name"])
            if entrant is None:
                raise Difference(f"{where}.agents[{a}]: {row['name']} is not in its environment record")
            status = entrant.fault["kind"] if entrant.fault else "ok"
            if row["status"] != status:
                raise Difference(
                    f"{where}.agents[{a}].status: the file says {row['status']!r}, its environment record {status!r}"
                )
            sp = entrant.self_play
            want = {
                "games": sp.games,
                "black_wins": sp.black_wins,
                "white_wins": sp.white_wins,
                "draws": sp.draws,
                "mean_plies": round(sp.plies / sp.games, 3) if sp.games else None,
            }
            stated = dict(row["self_play"])
            digest = stated.pop("games_sha256", None)
            diff = first_difference(stated, want, f"{where}.agents[{a}].self_play")
            if diff:
                raise Difference(diff)
            if digest is None:
                if entrant.self_play_games:
                    raise Difference(
                        f"{where}.agents[{a}].self_play: its games are kept but no games_sha256 binds them"
                    )
                continue  # a round from before self-play games were kept
            if self_play_digest(entrant.self_play_games) != digest:
                raise Difference(
                    f"{where}.agents[{a}].self_play.games_sha256: not the digest of the self-play games "
                    "in its environment record"
                )
            if kinds.get(row["name"]) != "reference":
                spec = spec or parse_spec(env["spec"])
                check_kept_self_play(spec, row["name"], entrant, plan, f"{where}.agents[{a}].self_play", report)
    return []


def check_kept_self_play(spec, name: str, entrant, plan: RoundPlan | None, where: str, report: Report) -> None:
    """An agent's kept self-play games in one environment of `spec`: one per game of its summary, each
    replayed to its end, its winner the one counted, and the outcome it was sent the
    replay's (every game but a last one the agent died in was sent one); with the plan, each
    game's seed the one its place derives."""
    games, sp = entrant.self_play_games, entrant.self_play
    if len(games) != sp.games:
        raise Difference(f"{where}: {len(games)} games kept for {sp.games} played")
    counted: Counter[str | None] = Counter()
    for i, game in enumerate(map(KeptGame.from_doc, games)):
        at = f"{where} game {i + 1}"
        if plan is not None and game.seed != self_play_seed(plan.seed, spec.id, name, i):
            raise Difference(f"{at}: seed {game.seed} is not the one its place derives")
        forfeit = None if game.forfeit is None else Color.BLACK if game.forfeit == "black" else Color.WHITE
        try:
            outcome = replay(spec, game.moves, forfeit).outcome()
        except ReplayError as exc:
            raise Difference(f"{at}: {exc}") from None
        winner = None if outcome.winner is None else outcome.winner.label
        counted[winner] += 1
        sent = game.outcome
        if sent is None:
            if i != len(games) - 1 or entrant.fault is None:
                raise Difference(f"{at}: no outcome was sent, but the agent played on")
            continue
        if sent != [winner or "draw", outcome.black_discs, outcome.white_discs]:
            raise Difference(
                f"{at}: the agent was sent {sent}, the replay gives "
                f"{[winner or 'draw', outcome.black_discs, outcome.white_discs]}"
            )
        report.self_play_checked += 1
    if (counted["black"], counted["white"], counted[None]) != (sp.black_wins, sp.white_wins, sp.draws):
        raise Difference(f"{where}: the kept games' winners are not the summary's")


def check_plan(plan: RoundPlan, full: dict) -> None:
    """The staff's round plan is the round's: its id and the seeds the record commits to."""
    provenance = full["provenance"]
    if plan.round_id != full["round"]["id"] or plan.round_id != f"{plan.tier}-{plan.key()[:10]}":
        raise Difference(
            f"round.id: the file says {full['round']['id']}, the staff's plan is round "
            f"{plan.round_id} and its content gives {plan.tier}-{plan.key()[:10]}"
        )
    if commitment("round", plan.seed) != provenance["seed_commitment"]:
        raise Difference("provenance.seed_commitment: not the commitment of the staff plan's round seed")
    tier = None if plan.tier_seed is None else commitment("tier", plan.tier_seed)
    if tier != provenance["tier_seed_commitment"]:
        raise Difference("provenance.tier_seed_commitment: not the commitment of the staff plan's tier seed")
    # What the id hashes, as the record states it: so a hidden tier's id is recomputed too.
    stated = {
        "provenance.config": provenance["config"],
        "provenance.limits": provenance["limits"],
        "provenance.arena_version": provenance["arena_version"],
        "provenance.commit": provenance["commit"],
        "field": full["field"],
        "environments": [[e["label"], e["id"], e["name"], e["spec"]] for e in full["environments"]],
    }
    planned = {
        "provenance.config": config_of(plan),
        "provenance.limits": plan.limits.to_dict(),
        "provenance.arena_version": plan.arena_version,
        "provenance.commit": plan.commit,
        "field": [e.public() for e in plan.field],
        "environments": [[e.label, e.spec.id, e.spec.name, e.spec.to_dict()] for e in plan.envs],
    }
    diff = first_difference(stated, planned)
    if diff:
        raise Difference(f"the staff record is not of the round its plan describes: {diff}")


# A plan from before the generator pool was recorded (no `pool`) was drawn from the only pool
# there was then: version 1.
POOL_BEFORE_RECORDED = 1


def stated_envs(data: dict) -> list[EnvEntry]:
    """The environments a results file states (labels, specs with their stated names)."""
    try:
        return [
            EnvEntry(i, e["label"], dataclasses.replace(parse_spec(e["spec"]), name=e["name"]))
            for i, e in enumerate(data["environments"])
        ]
    except SpecError as exc:
        raise Difference(f"environments: {exc}") from None


def check_plan_tier(plan: RoundPlan) -> None:
    """A generated round's environments (from the staff plan) against those its tier seed draws
    from its generator pool: one generation, as many as the round has (at least the tier's 28)."""
    if plan.tier_seed is None:  # `check_plan` has held it to the record's commitment, which a generated tier has
        raise Difference(f"--private: the plan of a {plan.tier} round has no tier seed")
    pool = POOL_BEFORE_RECORDED if plan.pool is None else plan.pool
    drawn = tier_specs(plan.tier, int_seed(plan.tier_seed), max(DEFAULT_GENERATED_COUNT, len(plan.envs)), pool=pool)
    check_tier(
        plan.tier,
        list(plan.envs),
        drawn,
        plan.profile,
        f"{plan.tier_seed}\x1f{plan.seed}",
        f"that its tier seed draws from generator pool {pool}",
    )


def check_tier(
    tier: str,
    envs: list[EnvEntry],
    tier_envs: list[EnvSpec],
    profile: Disclosure | None = None,
    secret: str | None = None,
    drawn: str = "",
) -> None:
    """Every environment of a round is one of its tier's (`tier_envs`: the fixed tier, or what a
    generated tier's seed draws), by id and, where the round names it, by name, and none twice
    (as `select_envs` picks them). Where the profile shuffles the labels and the round's secret
    is known (`secret`, as `make_plan` forms it), the labels' order is the one `order_envs`
    gives; otherwise the order is the round's choice (a list of ids) and is not checked."""
    by_id = {s.id: s for s in tier_envs}
    seen: set[str] = set()
    for env in envs:
        where, spec = f"environments[{env.index}] ({env.label})", env.spec
        ours = by_id.get(spec.id)
        if ours is None:
            raise Difference(f"{where}: {spec.id} is not an environment of the {tier} tier {drawn}".rstrip())
        if spec.name != ours.name:
            raise Difference(f"{where}: {spec.id} is named {spec.name!r}; the {tier} tier names it {ours.name!r}")
        if spec.id in seen:
            raise Difference(f"{where}: {spec.id} is listed twice; a round takes each environment once")
        seen.add(spec.id)
    if profile is None or not profile.shuffled_labels or secret is None:
        return
    ordered = order_envs([by_id[e.spec.id] for e in envs], profile, secret)
    for env, want in zip(envs, ordered):
        if (env.label, env.spec.id) != (want.label, want.spec.id):
            raise Difference(
                f"environments[{env.index}] ({env.label}): {env.spec.id} is not the environment the "
                f"round's secret orders there ({want.spec.id}, {want.label})"
            )


def check_published_seed_tier(data: dict, tier_seed: str) -> str:
    """With its tier's seed published, a generated round's environments (their ids: a public
    file may withhold the rules) against those the seed draws from the round's generator pool;
    the sentence that says what was checked."""
    config, envs = data["provenance"]["config"], data["environments"]
    tier = config["tier"]
    pool = config.get("pool") or POOL_BEFORE_RECORDED
    if any(env["id"] is None for env in envs):  # `check_disclosed` has held this to the profile
        return f"the {tier} round withholds its environments: they are checked against the seed with --private"
    drawn = {s.id for s in tier_specs(tier, int_seed(tier_seed), max(DEFAULT_GENERATED_COUNT, len(envs)), pool=pool)}
    seen: set[str] = set()
    for i, env in enumerate(envs):
        where = f"environments[{i}] ({env['label']})"
        if env["id"] not in drawn:
            raise Difference(
                f"{where}: {env['id']} is not an environment of the {tier} tier that the published "
                f"seed draws from generator pool {pool}"
            )
        if env["id"] in seen:
            raise Difference(f"{where}: {env['id']} is listed twice; a round takes each environment once")
        seen.add(env["id"])
    return f"its {len(envs)} environments are ones the published {tier} seed draws from generator pool {pool}"


# What is checked of every results file (the public one, and the staff record with --private), in order.
FILE_CHECKS: list[Check] = [
    check_twin_file,
    check_disclosed,
    check_statement,
    check_tier_of_file,
    check_statuses,
    check_games,
    check_numbers,
    check_gap,
]
# What is checked of the staff record against the public file and the round's own records, in order.
PRIVATE_CHECKS: list[Check] = [check_projection, check_records]
