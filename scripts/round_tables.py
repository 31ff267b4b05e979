"""Print one agent's per-environment results of a round as Markdown tables.

    python scripts/round_tables.py rounds/<round-id>.yaml [more rounds] --agent adaptive [--group condition|rules]

Reads the round's results file (with `grader.rounds.results.load_results`, which validates it; a
tier whose rules are disclosed: public or paper) and prints a table per group of
environments (win rate against random at each checkpoint, draw rate at the last one, SAE;
means over the group's environments), then one row per environment. This is how
examples/adaptive/README.md's tables are made: run the round, then this. Given several rounds
of the same environments (the same round run with other seeds), it first prints one table of
the groups with a row per round (named by its seed), then each group's mean over the rounds
and its spread (the largest minus the smallest, in percentage points), then each round's own
tables.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

from grader.rounds.results import ResultsError, load_results


def condition(rules: dict) -> str:
    """The paper's name for a win condition: majority, minority or K = k (with a turn limit)."""
    win = rules["win"]
    if win == "most":
        label = "majority"
    elif win == "fewest":
        label = "minority"
    else:
        k = rules["k"]
        label = "majority (K = 1.01)" if k > 1 else "minority (K = -0.01)" if k < 0 else f"K = {k}"
    if rules.get("turn_limit") is not None:
        label += f", {rules['turn_limit']} placements"
    return label


def rows_of(doc: dict, agent: str) -> list[dict]:
    rows = []
    for env in doc["environments"]:
        if env.get("spec") is None:
            raise SystemExit(f"{env['label']}: the rules of this round's environments are not disclosed")
        entry = next((a for a in env["agents"] if a["name"] == agent), None)
        if entry is None:
            raise SystemExit(f"{agent!r} did not play {env['label']}")
        rules = env["spec"]["rules"]
        rows.append(
            {
                "env": env["name"] or env["label"],
                "condition": condition(rules),
                "rules": f"{condition(rules)} / {rules['capture']}",
                "status": entry["status"],
                "curve": {p["games"]: p for p in entry["curve"]},
                "sae": entry["sae"],
            }
        )
    return rows


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def mean(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def tables(doc: dict, agent: str, group: str) -> str:
    rows = rows_of(doc, agent)
    checkpoints = doc["provenance"]["config"]["checkpoints"]
    last = checkpoints[-1]
    head = " | ".join(f"win {c}" for c in checkpoints)
    lines = [f"| {group} | environments | {head} | draw {last} | SAE |", "|---|---|" + "---|" * (len(checkpoints) + 2)]
    groups: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        groups[row[group]].append(row)
    for name, members in groups.items():
        wins = [pct(mean([m["curve"].get(c, {}).get("win_rate") for m in members])) for c in checkpoints]
        draw = pct(mean([m["curve"].get(last, {}).get("draw_rate") for m in members]))
        sae = mean([m["sae"] for m in members])
        lines.append(
            f"| {name} | {len(members)} | {' | '.join(wins)} | {draw} | {'-' if sae is None else f'{sae:.3f}'} |"
        )
    lines += [
        "",
        f"| environment | status | {head} | draw {last} | SAE |",
        "|---|---|" + "---|" * (len(checkpoints) + 2),
    ]
    for row in rows:
        wins = [pct(row["curve"].get(c, {}).get("win_rate")) for c in checkpoints]
        draw = pct(row["curve"].get(last, {}).get("draw_rate"))
        sae = "-" if row["sae"] is None else f"{row['sae']:.3f}"
        lines.append(f"| {row['env']} | {row['status']} | {' | '.join(wins)} | {draw} | {sae} |")
    return "\n".join(lines) + "\n"


def compare(docs: list[dict], agent: str, group: str) -> str:
    """The groups of several rounds of the same environments: a row per round, then the mean
    over the rounds with the spread (max - min, percentage points) of each figure."""
    checkpoints = docs[0]["provenance"]["config"]["checkpoints"]
    envs = [sorted(e["id"] for e in doc["environments"]) for doc in docs]
    if any(doc["provenance"]["config"]["checkpoints"] != checkpoints for doc in docs) or any(
        e != envs[0] for e in envs
    ):
        raise SystemExit("the rounds do not play the same environments at the same checkpoints: nothing to compare")
    last = checkpoints[-1]
    head = " | ".join(f"win {c}" for c in checkpoints)
    lines = [f"| {group} | round seed | {head} | draw {last} | SAE |", "|---|---|" + "---|" * (len(checkpoints) + 2)]
    per_round = []
    for doc in docs:
        groups: dict[str, list[dict]] = defaultdict(list)
        for row in rows_of(doc, agent):
            groups[row[group]].append(row)
        figures = {}
        for name, members in groups.items():
            values = [mean([m["curve"].get(c, {}).get("win_rate") for m in members]) for c in checkpoints]
            values.append(mean([m["curve"].get(last, {}).get("draw_rate") for m in members]))
            values.append(mean([m["sae"] for m in members]))
            figures[name] = values
        per_round.append((str(doc["provenance"]["config"]["seed"]), figures))

    def cell(value: float | None, i: int) -> str:
        return "-" if value is None else (f"{value:.3f}" if i == len(checkpoints) + 1 else pct(value))

    for name in per_round[0][1]:
        for seed, figures in per_round:
            lines.append(f"| {name} | {seed} | " + " | ".join(cell(v, i) for i, v in enumerate(figures[name])) + " |")
        summary = []
        for i in range(len(checkpoints) + 2):
            values = [f[name][i] for _, f in per_round if f[name][i] is not None]
            if not values:
                summary.append("-")
                continue
            spread = max(values) - min(values)
            summary.append(
                f"{cell(sum(values) / len(values), i)} ({spread:.3f})"
                if i == len(checkpoints) + 1
                else f"{cell(sum(values) / len(values), i)} ({100 * spread:.1f})"
            )
        lines.append(f"| {name} | mean (spread) | " + " | ".join(summary) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rounds", type=Path, nargs="+", help="a round's results file (several: the same round's seeds)")
    parser.add_argument("--agent", required=True)
    parser.add_argument("--group", choices=("condition", "rules"), default="condition")
    args = parser.parse_args(argv)
    try:
        docs = [load_results(path) for path in args.rounds]
    except ResultsError as exc:
        raise SystemExit(str(exc)) from None
    if len(docs) > 1:
        sys.stdout.write(compare(docs, args.agent, args.group) + "\n")
    for path, doc in zip(args.rounds, docs):
        if len(docs) > 1:
            sys.stdout.write(f"{path.name} (round seed {doc['provenance']['config']['seed']}):\n\n")
        sys.stdout.write(tables(doc, args.agent, args.group) + ("\n" if len(docs) > 1 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
