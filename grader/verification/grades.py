"""The grade export: one CSV row per student per round, for a gradebook to import.

Each row carries the student's SAE with its window (`sae_b0`, `sae_b_max`), standing and rank
(empty where the round publishes none: a field under 8), wins, draws and losses, and faults.
Across rounds only rows measured over one window, the export's, are compared: `best_sae` is a
student's best SAE over the rows of that window, and a row of another window is carried with
the reason in its `status` column and enters no maximum (the rules, section 6: an SAE is
comparable only within its window). The export's window is `window`, else the newest round's
(the last given).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

COLUMNS = (
    "student",
    "round",
    "tier",
    "sae",
    "sae_b0",
    "sae_b_max",
    "best_sae",
    "standing",
    "rank",
    "field",
    "wins",
    "draws",
    "losses",
    "faults",
    "faulted_envs",
    "fault_kinds",
    "status",
)
OK = "ok"


class GradesError(ValueError):
    """Rounds that make no export (none given, a window none of them has); the message says why."""


@dataclass(frozen=True)
class GradeRow:
    student: str
    round_id: str
    tier: str
    sae: float | None
    window: tuple[int, int] | None
    standing: float | None
    rank: int | None
    field: int
    wins: int
    draws: int
    losses: int
    faults: dict[str, int]
    faulted_envs: int


def rows_of(data: dict) -> list[GradeRow]:
    """A round's rows: every entrant that is not a reference player, keyed by its account."""
    field = {entry["name"]: entry for entry in data["field"]}
    out = []
    for agent in data["agents"]:
        entry = field[agent["name"]]
        if entry["kind"] == "reference":
            continue
        sae, standing = agent["sae"], agent["standing"]
        window = None if sae["b0"] is None or sae["b_max"] is None else (sae["b0"], sae["b_max"])
        out.append(
            GradeRow(
                entry["account"] or entry["name"],
                data["round"]["id"],
                data["round"]["tier"],
                sae["value"],
                window,
                None if standing is None else standing["value"],
                None if standing is None else standing["rank"],
                len(data["field"]),
                agent["record"]["wins"],
                agent["record"]["draws"],
                agent["record"]["losses"],
                dict(agent["faults"]),
                agent["faulted_envs"],
            )
        )
    return out


def parse_window(text: str) -> tuple[int, int]:
    """`100,2000` -> (100, 2000): B_0 below B_max, both positive."""
    try:
        b0, b_max = (int(part) for part in text.split(","))
    except ValueError:
        raise GradesError(f"--window: expected B0,BMAX (e.g. 100,2000), got {text!r}") from None
    if not 0 < b0 < b_max:
        raise GradesError(f"--window {text}: B0 must be positive and below BMAX")
    return b0, b_max


def status_of(row: GradeRow, window: tuple[int, int]) -> str:
    """`ok`, or why the row is not compared with the export's window."""
    if row.window is None:
        return "no window: no SAE was measured (no non-zero checkpoint pair); not compared"
    if row.window != window:
        return (
            f"other window: SAE over [{row.window[0]}, {row.window[1]}], the export's is "
            f"[{window[0]}, {window[1]}]; not compared"
        )
    return OK


def chronological(rounds: list[tuple[dict, str | None]]) -> list[dict]:
    """Rounds in the order they were played: by the date given beside each (when its file was
    added to rounds/; None sorts first, in the given order), the final last."""
    order = sorted(range(len(rounds)), key=lambda i: (rounds[i][0]["round"]["tier"] == "final", rounds[i][1] or "", i))
    return [rounds[i][0] for i in order]


def export(
    rounds: list[dict], window: tuple[int, int] | None = None, invalidated: dict[tuple[str, str], str] | None = None
) -> str:
    """The CSV of `rounds` (oldest first), compared over `window` (default: the newest round's).
    `invalidated` maps (round id, student) to the reason staff invalidated that result: the row
    is carried with it in `status` and enters no maximum."""
    if not rounds:
        raise GradesError("no rounds given")
    invalidated = invalidated or {}
    rows = [row for data in rounds for row in rows_of(data)]
    if window is None:
        newest = [row.window for row in rows_of(rounds[-1]) if row.window is not None]
        if not newest:
            raise GradesError(f"round {rounds[-1]['round']['id']} has no SAE window: give --window B0,BMAX")
        window = max(set(newest), key=newest.count)
    best: dict[str, float] = {}
    for row in rows:
        if row.window == window and row.sae is not None and (row.round_id, row.student) not in invalidated:
            best[row.student] = max(best.get(row.student, row.sae), row.sae)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in sorted(rows, key=lambda r: r.student):  # stable: a student's rows stay in round order
        status = status_of(row, window)
        if (row.round_id, row.student) in invalidated:
            status = f"invalidated: {invalidated[row.round_id, row.student]}"
        kinds = ";".join(f"{kind}={n}" for kind, n in row.faults.items() if n)
        writer.writerow(
            [
                row.student,
                row.round_id,
                row.tier,
                _number(row.sae),
                *(row.window if row.window else ("", "")),
                _number(best.get(row.student)) if status == OK else "",
                _number(row.standing),
                "" if row.rank is None else row.rank,
                row.field,
                row.wins,
                row.draws,
                row.losses,
                sum(row.faults.values()),
                row.faulted_envs,
                kinds,
                status,
            ]
        )
    return buffer.getvalue()


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.6g}"
