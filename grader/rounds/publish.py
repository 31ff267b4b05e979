"""Turn a round's environment records into its results: the full record and its public projection.

The full record (`<private>/<round-id>.yaml` and its games with moves and seeds) stays with
staff; the projection by the tier's disclosure goes to `rounds/`. Both carry the same numbers,
computed once by `grader.rounds.aggregates` from the per-game outcomes.
"""

from __future__ import annotations

from pathlib import Path

from grader.common.metrics import generalisation_gap
from grader.rounds.aggregates import MIN_ENVS_FOR_PUBLIC, MIN_FIELD_FOR_STANDING, Scores, ScoringInput, compute
from grader.rounds.plan import RoundPlan, commitment
from grader.rounds.records import EnvRecord, IncompleteRecordsError, self_play_digest
from grader.rounds.results import (
    SCHEMA_VERSION,
    EnvDetail,
    GamesRef,
    Provenance,
    RoundInfo,
    RoundResults,
    games_body,
    write_round,
)
from grader.season.disclosure import PROFILES, project_games, project_result


def statuses_of(records: list[EnvRecord]) -> dict[str, dict[str, str]]:
    """label -> entrant -> "ok" or the kind of the agent's fault there."""
    return {r.label: {name: (e.fault["kind"] if e.fault else "ok") for name, e in r.entrants.items()} for r in records}


def elo_anchor(plan: RoundPlan) -> str | None:
    """The entrant that is the reference `random`, which Elo anchors at 1000."""
    return next((e.name for e in plan.field if e.kind == "reference" and e.source == "random"), None)


def config_of(plan: RoundPlan) -> dict:
    return (
        {
            "tier": plan.tier,
            "environments": len(plan.envs),
            "env_ids": [e.spec.id for e in plan.envs],
            "budget": plan.budget,
            "checkpoints": list(plan.checkpoints),
            "games_per_checkpoint": plan.games_per_checkpoint,
            "pairing_games": plan.pairing_games,
            "seed": plan.seed,
            "sandbox": plan.sandbox,
            "disclosure": plan.disclosure,
            "arena_retries": plan.arena_retries,
            "max_arena_faults": plan.max_arena_faults,
            "public_round": None
            if plan.public_round is None
            else {"id": plan.public_round["id"], "sha256": plan.public_round["sha256"]},
        }
        | ({"requested": True} if plan.requested else {})
        | ({"pool": plan.pool} if plan.pool is not None else {})
    )


def round_notes(
    tier: str, environments: int, field_size: int, standing_published: bool, requested: bool = False
) -> list[str]:
    """The notes a results file gives on what the round is and is not (research, private, no standing)."""
    notes = []
    if tier == "paper":
        notes.append("a paper-tier round is research: it never enters the leaderboard")
    if requested:
        notes.append("a requested run: a private round for its entrant; it is not on the site and ranks nobody")
    if environments < MIN_ENVS_FOR_PUBLIC:
        notes.append(
            f"{environments} environments, fewer than {MIN_ENVS_FOR_PUBLIC}: a private round; "
            "it does not move the leaderboard"
        )
    if not standing_published:
        notes.append(
            f"a field of {field_size}, fewer than {MIN_FIELD_FOR_STANDING}: a private round; no standing "
            "or Elo is published; the pairwise results are the result"
        )
    return notes


def round_info(plan: RoundPlan, scores: Scores) -> RoundInfo:
    # The rules' one test of privacy (grader.season.disclosure.private_reasons), less the final's
    # (which is private until staff publish it, a state the record does not hold).
    private = len(plan.envs) < MIN_ENVS_FOR_PUBLIC or plan.requested or len(plan.field) < MIN_FIELD_FOR_STANDING
    research = plan.tier == "paper"
    notes = round_notes(plan.tier, len(plan.envs), len(plan.field), scores.standing_published, plan.requested)
    leaderboard = plan.tier in ("ladder", "final") and not private and scores.standing_published
    return RoundInfo(
        plan.round_id, plan.tier, "complete", private, research, scores.standing_published, leaderboard, notes
    )


def add_generalisation_gap(plan: RoundPlan, scores: Scores) -> None:
    """Practice-tier minus scored-tier figures, for entrants found (by digest) in both rounds."""
    if plan.public_round is None:
        return
    by_digest = {e.digest: e.name for e in plan.field}
    baseline = {by_digest[d]: v for d, v in plan.public_round["agents"].items() if d in by_digest}
    for agent in scores.agents:
        ref = baseline.get(agent.name)
        if ref is None:
            continue
        final = agent.curve[-1].win_rate if agent.curve else None
        agent.generalisation_gap = {
            "public_round": plan.public_round["id"],
            "final_win_rate": generalisation_gap(ref["final_win_rate"], final),
            "sae": generalisation_gap(ref["sae"], agent.sae.value),
        }


def build(plan: RoundPlan, records: list[EnvRecord], execution: dict) -> tuple[dict, list[dict]]:
    """(the full results document, the full games) of a finished round."""
    records = sorted(records, key=lambda r: r.index)
    if [r.index for r in records] != [e.index for e in plan.envs]:
        recorded = {r.index for r in records}
        raise IncompleteRecordsError(
            plan.round_id,
            [e.label for e in plan.envs if e.index not in recorded],
            "the round's environment records are incomplete",
        )
    games = [g for r in records for g in r.games]
    scores = compute(
        ScoringInput(
            names=plan.names,
            labels=[e.label for e in plan.envs],
            checkpoints=list(plan.checkpoints),
            games_per_checkpoint=plan.games_per_checkpoint,
            pairing_games=plan.pairing_games,
            statuses=statuses_of(records),
            games=games,
            elo_anchor=elo_anchor(plan),
        )
    )
    if scores.problems:  # our own games are inconsistent: a bug, never published
        raise RuntimeError("the round's own games do not add up:\n  " + "\n  ".join(scores.problems))
    add_generalisation_gap(plan, scores)
    envs = []
    for entry, record in zip(plan.envs, records):
        rows = scores.env_agents[entry.label]
        for row in rows:
            entrant = record.entrants[row.name]
            sp = entrant.self_play
            row.self_play = {
                "games": sp.games,
                "black_wins": sp.black_wins,
                "white_wins": sp.white_wins,
                "draws": sp.draws,
                "mean_plies": round(sp.plies / sp.games, 3) if sp.games else None,
                "games_sha256": self_play_digest(entrant.self_play_games),
            }
        envs.append(EnvDetail(entry.label, entry.spec.id, entry.spec.name, entry.spec.to_dict(), rows))
    provenance = Provenance(
        arena_version=plan.arena_version,
        commit=plan.commit,
        seed_commitment=commitment("round", plan.seed),
        tier_seed_commitment=None if plan.tier_seed is None else commitment("tier", plan.tier_seed),
        config=config_of(plan),
        limits=plan.limits.to_dict(),
        execution=execution,
    )
    results = RoundResults(
        schema_version=SCHEMA_VERSION,
        round=round_info(plan, scores),
        provenance=provenance,
        disclosure={"profile": "full", "description": PROFILES["full"].describe()},
        field=[e.public() for e in plan.field],
        agents=scores.agents,
        elo=scores.elo,
        pairwise=scores.pairwise,
        environments=envs,
        games=GamesRef("", "", 0),
    )
    return results.to_dict(), games


def execution_of(command: str, shards: list[str], records: list[EnvRecord]) -> dict:
    """How the round was run: not part of what it measured (and not byte-identical across runs)."""
    faults = [
        {"env": r.label, "entrant": f["entrant"], "kind": f["kind"], "phase": f["phase"]}
        for r in sorted(records, key=lambda r: r.index)
        for f in r.arena_faults
    ]
    # Each shard's runner built its own image: every distinct one is named, with its base.
    images = sorted({tuple(sorted(r.image.items())) for r in records if r.image}, key=lambda i: dict(i)["id"])
    out: dict[str, object] = {
        "command": command,
        "shards": shards,
        "arena_faults": faults,
        "images": [dict(i) for i in images],
    }
    host = host_load(records)
    if host is not None:
        out["host"] = host
    return out


def host_load(records: list[EnvRecord]) -> dict | None:
    """The host's load over the round, from each environment's samples (None if none has them):
    the cores, whether every sandbox had a core of its own, and the range of the 1-minute load
    average and of the busy fraction of all CPUs (the round's own work included)."""
    hosts = [r.host for r in records if r.host]
    if not hosts:
        return None

    def span(values: list) -> dict | None:
        values = [v for v in values if v is not None]
        return {"min": min(values), "mean": round(sum(values) / len(values), 3), "max": max(values)} if values else None

    return {
        "environments": len(hosts),
        "cores": max(h["cores"] for h in hosts),
        "pinned": all(h["core"] is not None for h in hosts),
        "loadavg": span([h["loadavg_start"] for h in hosts] + [h["loadavg_end"] for h in hosts]),
        "busy": span([h["busy"] for h in hosts]),
    }


def publish(
    plan: RoundPlan, records: list[EnvRecord], out: Path, private: Path, command: str, shards: list[str]
) -> tuple[Path, Path]:
    """Write the full record to `private` and the public projection to `out`; their paths."""
    full, games = build(plan, records, execution_of(command, shards, records))
    profile = plan.profile
    public = project_result(full, profile)
    body = games_body(games)
    full_path = write_round(private, full, games, body)
    public_games = project_games(games, profile)
    public_path = write_round(out, public, public_games, body if public_games is games else None)
    return public_path, full_path


# -- Private rounds: sealed to the arena's key, never in plain on main -------------------------
WITHHELD = Path("withheld")
WITHHELD_SUFFIX = ".sealed"


class WithheldError(ValueError):
    """A withheld round that cannot be sealed, found or opened."""


def round_files(rounds: Path, round_id: str) -> list[Path]:
    """The files of a round in `rounds` (results, twin, games), relative to `rounds`."""
    rounds = Path(rounds)
    names = [Path(f"{round_id}.yaml"), Path(f"{round_id}.json")]
    out = [n for n in names if (rounds / n).is_file()]
    folder = rounds / round_id
    if folder.is_dir():
        out += sorted(p.relative_to(rounds) for p in folder.rglob("*") if p.is_file())
    return out


def withhold(rounds: Path, round_id: str, withheld: Path, recipient: str) -> Path:
    """Seal a round's files in `rounds` to `recipient` (the arena's public key) into
    `withheld/<round-id>.sealed` and remove them from `rounds`; the sealed file's path."""
    import io
    import shutil
    import tarfile

    from grader.documents.sealing import seal

    files = round_files(rounds, round_id)
    if not any(f.name == f"{round_id}.yaml" for f in files):
        raise WithheldError(f"no round {round_id} in {rounds}/ to withhold")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for rel in files:
            data = (Path(rounds) / rel).read_bytes()
            info = tarfile.TarInfo(rel.as_posix())
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            tar.addfile(info, io.BytesIO(data))
    out = Path(withheld) / f"{round_id}{WITHHELD_SUFFIX}"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(seal(buffer.getvalue(), recipient))
    for rel in files:
        (Path(rounds) / rel).unlink()
    shutil.rmtree(Path(rounds) / round_id, ignore_errors=True)
    return out


def release(withheld: Path, round_id: str, rounds: Path, key) -> list[Path]:
    """Open `withheld/<round-id>.sealed` with the arena's private key `key` and write its files
    into `rounds` (only the round's own names, regular files); the sealed file is removed."""
    import io
    import tarfile

    from nacl.exceptions import CryptoError
    from nacl.public import SealedBox

    path = Path(withheld) / f"{round_id}{WITHHELD_SUFFIX}"
    if not path.is_file():
        raise WithheldError(f"no withheld round {round_id} ({path} does not exist)")
    try:
        plain = SealedBox(key).decrypt(path.read_bytes())
    except CryptoError as exc:
        raise WithheldError(f"{path}: not sealed to this arena's key ({exc})") from None
    written = []
    with tarfile.open(fileobj=io.BytesIO(plain), mode="r:gz") as tar:
        for member in tar.getmembers():
            name = Path(member.name)
            allowed = name.as_posix() in (f"{round_id}.yaml", f"{round_id}.json") or (
                name.parts[0] == round_id and ".." not in name.parts and not name.is_absolute()
            )
            if not member.isfile() or not allowed:
                raise WithheldError(f"{path}: unexpected member {member.name!r}")
            target = Path(rounds) / name
            target.parent.mkdir(parents=True, exist_ok=True)
            data = tar.extractfile(member)
            assert data is not None  # a regular file, checked above
            target.write_bytes(data.read())
            written.append(target)
    path.unlink()
    return written
