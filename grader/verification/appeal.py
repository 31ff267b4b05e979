"""The evidence an appeal is given: one student's per-environment counts in one round.

Wins, draws and faults per environment, without environment identities (docs/rules.md §8).

Environments are named by the round's labels only (`E01`..., the order the round file already
publishes them in; on the final an order drawn from the secrets), never by id, name or spec, so
the evidence says no more about an environment than the public round file does.
"""

from __future__ import annotations

SCHEMA_VERSION = 1


class AppealError(ValueError):
    """A student who is not in the round; the message names the entrants there are."""


def evidence(data: dict, student: str) -> dict:
    """The appeal evidence document of `student` (an account, or an entrant's name) in a round."""
    field = [e for e in data["field"] if e["kind"] != "reference"]
    entry = next((e for e in field if student in (e["account"], e["name"])), None)
    if entry is None:
        names = ", ".join(sorted(e["account"] or e["name"] for e in field)) or "none"
        raise AppealError(f"--student {student}: not in round {data['round']['id']} (its students: {names})")
    agent = next(a for a in data["agents"] if a["name"] == entry["name"])
    environments = []
    for env in data["environments"]:
        mine = next((a for a in env["agents"] if a["name"] == entry["name"]), None)
        if mine is None:
            continue
        record = mine["record"]
        environments.append(
            {
                "label": env["label"],
                "status": mine["status"],
                "faulted": mine["status"] != "ok",
                "wins": record["wins"],
                "draws": record["draws"],
                "losses": record["losses"],
                "games": record["games"],
                "checkpoints": [
                    {"games": p["games"], "win_rate": p["win_rate"], "draw_rate": p["draw_rate"]} for p in mine["curve"]
                ],
            }
        )
    record = agent["record"]
    return {
        "schema_version": SCHEMA_VERSION,
        "round": data["round"]["id"],
        "tier": data["round"]["tier"],
        "student": entry["account"] or entry["name"],
        "digest": entry["digest"],
        "totals": {
            "wins": record["wins"],
            "draws": record["draws"],
            "losses": record["losses"],
            "games": record["games"],
            "faulted_envs": agent["faulted_envs"],
            "faults": {kind: n for kind, n in agent["faults"].items() if n},
        },
        "environments": environments,
        "note": "pairing games (wins, draws, losses) and the checkpoint curve by environment label; environment identities (ids, names, specs, rules) "
        "are withheld while the competition runs",
    }
