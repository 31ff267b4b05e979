"""Play a small local round: your agent beside the reference opponents, as a real round plays it.

    python play.py             (or: make play)
    python play.py --envs 8 --budget 500 --checkpoints 0,100,500

Per environment, each entrant (you and the reference opponents) gets a fresh session:
prepare; 0-game checkpoint games against the seeded random opponent; budget self-play with
an outcome after each game, pausing for checkpoint games; freeze; then every pair plays its
pairing games. It is the arena's own round code (`grader.rounds`), only smaller: by default
one environment per public layout, each with another rule pair, 100 budget games,
checkpoints at 0, 20, 50 and 100.

Prints the win-rate curve (against the seeded random opponent, draws apart) as a table, the
SAE with its window, your curve per environment and your pairing records; saves the curve
as play-results/curve.svg, the whole result as play-results/results.yaml, and what your agent
printed (its stdout and stderr, the start of it up to the output kept) in each environment as
play-results/logs/<label>.log. The numbers of
a round this small are noisy: a 10-game checkpoint moves in steps of 0.1.

Exit status: 0 played, 1 your agent faulted somewhere (the table says where) or the arena
failed, 2 the kit could not run.
"""

from __future__ import annotations

import argparse
import html
import math
import sys
import tempfile
import time
from pathlib import Path

import kitenv

DEFAULT_BUDGET = 100
DEFAULT_CHECKPOINTS = "0,20,50,100"
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="play.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--agent", type=Path, default=kitenv.KIT_DIR, help="folder with agent.py (default: this kit folder)")
    p.add_argument("--name", default="you", help="your entrant's name in the tables (default: you)")
    p.add_argument(
        "--opponents",
        default="random,greedy",
        help="reference opponents in the round, comma-separated: random, greedy, minimax (default random,greedy)",
    )
    p.add_argument(
        "--envs",
        help="N (the public tier's first N) or ids/names, comma-separated "
        "(default: one environment per public layout, each with another rule pair)",
    )
    p.add_argument(
        "--budget", type=int, default=DEFAULT_BUDGET, help=f"self-play games per environment (default {DEFAULT_BUDGET})"
    )
    p.add_argument(
        "--checkpoints",
        help=f"games used at which win rate is measured (default {DEFAULT_CHECKPOINTS} for the default "
        "budget; else the canonical ones below the budget, then the budget)",
    )
    p.add_argument(
        "--games-per-checkpoint", type=int, default=10, help="games per checkpoint (default 10; a round plays 20)"
    )
    p.add_argument(
        "--pairing-games", type=int, default=10, help="games per pair, half per colour (default 10; a round plays 20)"
    )
    p.add_argument("--seed", default="0", help="the round seed (default 0)")
    p.add_argument(
        "--sandbox",
        choices=kitenv.SANDBOXES,
        default="auto",
        help="as for check.py (default auto: bubblewrap where it works, else none)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=kitenv.KIT_DIR / "play-results",
        help="folder for curve.svg, results.yaml and logs/ (default play-results)",
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        data = kitenv.start(__file__)
    except kitenv.KitSetupError as exc:
        return kitenv.fail(exc)
    try:
        return play(args, data)
    except ValueError as exc:  # bad --envs, --checkpoints, names...: the arena's own messages
        return kitenv.fail(exc)


def play(args: argparse.Namespace, data: dict) -> int:
    from engine import public_tier
    from grader.common.errors import OptionError
    from grader.common.schedule import parse_checkpoints
    from grader.documents.yaml_io import dump_yaml
    from grader.kit.build import choose_sandbox, stage_submission, warm_up_engine
    from grader.play.session import REFERENCE_NAMES, parse_entrant
    from grader.rounds.orchestrate import make_plan
    from grader.rounds.play import HeldEnv, play_env
    from grader.rounds.publish import build, execution_of

    opponents = [o.strip() for o in args.opponents.split(",") if o.strip()]
    unknown = [o for o in opponents if o not in REFERENCE_NAMES]
    if unknown:
        raise OptionError(
            "--opponents",
            unknown,
            f"--opponents: {', '.join(unknown)} (reference opponents: {', '.join(REFERENCE_NAMES)})",
        )
    if args.name in opponents:
        raise OptionError("--name", args.name, f"--name {args.name!r} is also a reference opponent's name")
    checkpoints = args.checkpoints
    if checkpoints is None and args.budget == DEFAULT_BUDGET:
        checkpoints = DEFAULT_CHECKPOINTS
    envs = args.envs or ",".join(s.id for s in default_envs(public_tier()))
    sandbox, note = choose_sandbox(args.sandbox)
    print(f"sandbox: {note}", flush=True)
    with tempfile.TemporaryDirectory(prefix="arena-play-") as tmp:
        folder = args.agent.resolve()
        staged = Path(tmp, args.name)
        stage_submission(folder, staged, kitenv.excludes(folder, data))
        field = [parse_entrant(f"{args.name}={staged}")] + [parse_entrant(o) for o in opponents]
        plan = make_plan(
            "public",
            field,
            envs,
            args.budget,
            parse_checkpoints(checkpoints, args.budget),
            args.games_per_checkpoint,
            args.pairing_games,
            str(args.seed),
            None,
            sandbox.name,
        )
        print(
            f"round: {len(plan.envs)} environments, {', '.join(plan.names)}; budget {plan.budget}, "
            f"checkpoints {', '.join(map(str, plan.checkpoints))}, {plan.games_per_checkpoint} games each, "
            f"{plan.pairing_games} games per pair",
            flush=True,
        )
        warm_up_engine([e.spec for e in plan.envs])
        records = []
        started = time.monotonic()
        for entry in plan.envs:
            env_started = time.monotonic()
            result = play_env(plan, entry, progress(entry.label, args.name, env_started, started), sandbox)
            if isinstance(result, HeldEnv):
                print(
                    f"the arena failed environment {entry.label} on every attempt (not your agent's fault): "
                    f"{result.arena_faults}",
                    file=sys.stderr,
                )
                return 1
            now = time.monotonic()
            print(
                f"  {entry.label} ({entry.spec.name}): played in {now - env_started:.1f} s "
                f"({now - started:.0f} s since the first environment began)",
                file=sys.stderr,
                flush=True,
            )
            records.append(result)
        stderr = {r.label: r.stderr.get(args.name, "") for r in records}
    results, _games = build(plan, records, execution_of("play.py", [], records))
    print_tables(results, args.name)
    args.out.mkdir(parents=True, exist_ok=True)
    svg_path = args.out / "curve.svg"
    svg_path.write_text(curve_svg(results, args.name), encoding="utf-8")
    (args.out / "results.yaml").write_text(dump_yaml(results), encoding="utf-8")
    logs = save_logs(args.out, results, stderr)
    print(f"plot: {svg_path}")
    print(f"results: {args.out / 'results.yaml'}")
    print(
        f"your agent's output (what it printed), one file per environment: {logs}/ "
        f"({', '.join(p.name for p in sorted(logs.iterdir()))})"
    )
    mine = next(a for a in results["agents"] if a["name"] == args.name)
    if mine["faulted_envs"]:
        for env in results["environments"]:
            row = next(a for a in env["agents"] if a["name"] == args.name)
            if row["status"] != "ok":
                print(
                    f"--- your agent's stderr in {env['label']} ({env['name']}), where it faulted: {row['status']} ---"
                )
                print(tail(stderr.get(env["label"], "")) or "(nothing)")
                print("--- end ---")
        return 1
    return 0


def save_logs(out: Path, results: dict, stderr: dict[str, str]) -> Path:
    """Write what the agent printed in each environment to `out`/logs/<label>.log (a file per
    environment, even an empty one, so a missing debug print is seen as missing); the folder."""
    folder = out / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.log"):
        old.unlink()  # a previous run's environments are not this run's
    for env in results["environments"]:
        text = stderr.get(env["label"], "")
        (folder / f"{env['label']}.log").write_text(
            text if text else "(your agent printed nothing here)\n", encoding="utf-8"
        )
    return folder


def default_envs(tier: list) -> list:
    """One environment per public layout, each with another rule pair (the i-th layout gets
    the i-th pair, in tier order), so a short round sees every board and most objectives."""
    by_layout: dict = {}
    for spec in tier:
        key = (spec.layout.rows, spec.layout.cols, tuple(map(tuple, spec.layout.obstacles)))
        by_layout.setdefault(key, []).append(spec)
    return [specs[i % len(specs)] for i, specs in enumerate(by_layout.values())]


def progress(label: str, name: str, env_started: float, started: float):
    """A report callback for the round code: a line on stderr every few seconds, in words that
    say whose games they are, with the time in this environment and in all."""
    last = [0.0]

    def report(_label: str, _count: int, what: str, _notice: bool = False) -> None:
        words = progress_words(what, name)
        if words is None:
            return
        now = time.monotonic()
        if now - last[0] >= 3.0:
            last[0] = now
            print(
                f"  {label}: {words} ({now - env_started:.0f} s in {label}, {now - started:.0f} s in all)",
                file=sys.stderr,
                flush=True,
            )

    return report


def progress_words(what: str, name: str) -> str | None:
    """The round code's progress note (`NAME self-play K/B`, `NAME checkpoint C`, `pairing A v B`),
    said of your agent or of a reference opponent; None for a reference opponent's budget games
    (it learns nothing from them, and they take no time worth a line)."""
    words = what.split()
    if len(words) == 3 and words[1] in ("self-play", "checkpoint"):
        mine = words[0] == name
        if words[1] == "self-play":
            done, _, budget = words[2].partition("/")
            return f"your agent: self-play game {done} of {budget}" if mine else None
        who = "your agent" if mine else f"reference opponent {words[0]}"
        return f"{who}: the games against random at checkpoint {words[2]}"
    if len(words) == 4 and words[0] == "pairing":
        return f"pairing games, {words[1]} against {words[3]}"
    return what


def tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def table(rows: list[list[str]]) -> str:
    """Left-aligned columns, two spaces apart."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def print_tables(results: dict, name: str) -> None:
    """The curve of every entrant, your curve per environment, and your pairing records."""
    agents = results["agents"]
    envs = results["environments"]
    points = [p["games"] for p in agents[0]["curve"]]
    window = agents[0]["sae"]
    sae_head = f"SAE [{window['b0']}, {window['b_max']}]" if window["b0"] is not None else "SAE (no window)"
    print(
        f"\nwin rate against the seeded random opponent at each checkpoint, mean over {len(envs)} environments "
        "(draws apart; checkpoints are games used):"
    )
    rows = [["entrant", *map(str, points), sae_head, "faulted envs"]]
    for a in agents:
        rows.append(
            [a["name"], *(fmt(p["win_rate"]) for p in a["curve"]), fmt(a["sae"]["value"], 3), str(a["faulted_envs"])]
        )
    print(table(rows))
    print("\ndraw rate at each checkpoint:")
    rows = [["entrant", *map(str, points)]]
    for a in agents:
        rows.append([a["name"], *(fmt(p["draw_rate"]) for p in a["curve"])])
    print(table(rows))
    print(f"\n{name}, per environment (win rate; draw rate at the last checkpoint):")
    rows = [["env", "name", *map(str, points), "draws", "SAE", "status"]]
    for env in envs:
        row = next(a for a in env["agents"] if a["name"] == name)
        rows.append(
            [
                env["label"],
                env["name"] or "-",
                *(fmt(p["win_rate"]) for p in row["curve"]),
                fmt(row["curve"][-1]["draw_rate"]),
                fmt(row["sae"], 3),
                row["status"],
            ]
        )
    print(table(rows))
    print("\npairings (after freeze, no outcomes sent), over all environments:")
    rows = [["pair", "wins", "draws", "losses", "games"]]
    for pair in results["pairwise"]:
        if name not in (pair["a"], pair["b"]):
            continue
        mine_first = pair["a"] == name
        other = pair["b"] if mine_first else pair["a"]
        wins, losses = (pair["a_wins"], pair["b_wins"]) if mine_first else (pair["b_wins"], pair["a_wins"])
        rows.append([f"{name} v {other}", str(wins), str(pair["draws"]), str(losses), str(pair["games"])])
    print(table(rows) if len(rows) > 1 else "  (no pairing was played)")


def curve_svg(results: dict, name: str, width: int = 720, height: int = 420) -> str:
    """The mean win-rate curve of every entrant (and your draw rate, dashed) as an SVG.

    The x axis is ln(1 + games), the log scale SAE integrates over, with the 0-game
    zero-shot point at its left edge; the y axis is the rate, 0 to 1.
    """
    agents = results["agents"]
    points = [p["games"] for p in agents[0]["curve"]]
    left, right, top, bottom = 56, 150, 40, 48
    plot_w, plot_h = width - left - right, height - top - bottom
    span = math.log1p(max(points)) or 1.0

    def x(games: int) -> float:
        return left + plot_w * math.log1p(games) / span

    def y(rate: float) -> float:
        return top + plot_h * (1.0 - rate)

    esc = html.escape
    window = agents[0]["sae"]
    title = f"win rate against random, mean over {len(results['environments'])} environments"
    if window["b0"] is not None:
        title += f" (SAE window [{window['b0']}, {window['b_max']}])"
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="22" font-size="14">{esc(title)}</text>',
    ]
    for i in range(5):
        rate = i / 4
        out.append(f'<line x1="{left}" y1="{y(rate):.1f}" x2="{left + plot_w}" y2="{y(rate):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 8}" y="{y(rate) + 4:.1f}" text-anchor="end">{rate:.2f}</text>')
    for games in points:
        out.append(f'<line x1="{x(games):.1f}" y1="{top}" x2="{x(games):.1f}" y2="{top + plot_h}" stroke="#eee"/>')
        out.append(f'<text x="{x(games):.1f}" y="{top + plot_h + 16}" text-anchor="middle">{games}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#444"/>')
    out.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 10}" text-anchor="middle">games used (log scale)</text>'
    )
    out.append(
        f'<text x="14" y="{top + plot_h / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 14 {top + plot_h / 2:.1f})">rate</text>'
    )
    ordered = sorted(agents, key=lambda a: a["name"] != name)  # yours first, drawn last (on top)
    for index, agent in reversed(list(enumerate(ordered))):
        colour = PALETTE[index % len(PALETTE)]
        series = [("win rate", "win_rate", "")]
        if agent["name"] == name:
            series.append(("draw rate", "draw_rate", ' stroke-dasharray="6 4"'))
        for label, key, dash in series:
            coords = " ".join(f"{x(p['games']):.1f},{y(p[key]):.1f}" for p in agent["curve"])
            width_px = 3 if agent["name"] == name else 2
            out.append(f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="{width_px}"{dash}/>')
            for p in agent["curve"]:
                out.append(
                    f'<circle cx="{x(p["games"]):.1f}" cy="{y(p[key]):.1f}" r="3" fill="{colour}">'
                    f"<title>{esc(agent['name'])} {label} at {p['games']} games: {p[key]:.3f}</title></circle>"
                )
    legend_x, legend_y = left + plot_w + 16, top + 8
    row = 0
    for index, agent in enumerate(ordered):
        colour = PALETTE[index % len(PALETTE)]
        entries = [("win rate", "")] + ([("draw rate", ' stroke-dasharray="6 4"')] if agent["name"] == name else [])
        for label, dash in entries:
            ly = legend_y + 18 * row
            out.append(
                f'<line x1="{legend_x}" y1="{ly}" x2="{legend_x + 22}" y2="{ly}" stroke="{colour}" '
                f'stroke-width="2"{dash}/>'
            )
            out.append(f'<text x="{legend_x + 28}" y="{ly + 4}">{esc(agent["name"])} {label}</text>')
            row += 1
    out.append("</svg>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
