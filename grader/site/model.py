"""What the pages show, computed from a round document: rows, groups, figures and tables.

Nothing here recomputes a published number: standings, intervals, SAE and records are read
from the round file as written. What is derived is presentation: the sort order (by the
published rank), tie groups (published intervals that overlap), quartiles for a figure.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from markupsafe import Markup, escape

from engine.rules import capture_descriptions
from grader.common.faults import FaultKind, Payer, kinds
from grader.common.metrics import wilson
from grader.site import svg
from grader.site.render import fmt_rate

MIN_FIELD_FOR_STANDING = 8  # the rules' threshold (docs/rules.md §5); the round file says which applies
# The kinds an agent pays for (grader.common.faults), in the order the tables list them.
FAULT_KINDS = kinds(Payer.AGENT)
# What each of those kinds means, in words (the registry's descriptions, Markdown code marks
# dropped): a page prints the reason beside the word, never the word alone.
FAULT_WORDS = {k: FaultKind(k).description.replace("`", "") for k in FAULT_KINDS}
CAPTURE_TEXT = capture_descriptions()  # the engine's rule table is the one source


def rules_text(rules: dict) -> str:
    """A sentence for an environment's rules, from its spec (the engine's rule table, no kernels)."""
    win = rules.get("win")
    if win == "most":
        goal = "more discs wins"
    elif win == "fewest":
        goal = "fewer discs wins"
    elif win == "band":
        k = rules.get("k")
        goal = f"a disc share strictly between {min(k, 0.5):g} and {max(k, 0.5):g} wins (k = {k:g})"
    else:
        goal = f"win condition {win}"
    text = f"{goal}; {CAPTURE_TEXT.get(rules.get('capture'), 'capture ' + str(rules.get('capture')))}"
    if rules.get("turn_limit") is not None:
        text += f"; the game stops after {rules['turn_limit']} placements"
    return text


def rules_label(rules: dict) -> str:
    win = rules.get("win")
    head = f"band k={rules.get('k')}" if win == "band" else str(win)
    return f"{head}/{rules.get('capture')}"


def fault_counts(faults: dict) -> list[tuple[str, int]]:
    """An agent's faults as (kind, count) pairs, the kinds it has, in FAULT_KINDS order."""
    return [(k, faults[k]) for k in FAULT_KINDS if faults.get(k)]


def short_digest(digest: str) -> str:
    """`sha256:0123456789ab` for a submission, the digest itself for a reference player."""
    return digest[:19] if digest.startswith("sha256:") else digest


@dataclass
class Row:
    """One agent's line of a standings table (and its colour in the round's figures)."""

    name: str
    index: int
    kind: str
    account: str | None
    digest: str
    record: dict
    standing: dict | None
    sae: dict
    faults: list[tuple[str, int]]
    faulted_envs: int
    elo: float | None
    # Pairing games of the environments it faulted: lost, as the rules count them (0 on every
    # metric), and shown with its W/D/L so a faulted agent never looks unbeaten.
    faulted_games: int = 0
    group: int = 0
    group_size: int = 1
    tie_label: str = ""  # T1, T2...: only for groups of two or more, numbered from the top
    bar: object = None
    invalidated: str | None = None  # staff's reason, when they invalidated this result

    @property
    def games(self) -> int:
        """Every pairing game the agent's standing stands on: counted ones and faulted ones."""
        return self.record["games"] + self.faulted_games

    @property
    def losses(self) -> int:
        """Losses as the rules count them: the counted games lost and the faulted ones."""
        return self.record["losses"] + self.faulted_games


@dataclass
class Window:
    """The SAE window of a round: the first and last non-zero checkpoints it integrates over."""

    b0: int | None
    b_max: int | None
    checkpoints: list[int]
    mixed: bool = False
    missing: str | None = None  # why the round has no SAE at all ("one non-zero checkpoint"), or None


@dataclass
class Table:
    """A round's standings table, as the leaderboard and the round page print it."""

    rows: list[Row]
    standing_published: bool
    window: Window
    notes: list[str] = field(default_factory=list)
    # How the published intervals were computed (grader.common.metrics.INTERVAL_METHODS); rounds that
    # name no method published Wilson's interval over the games.
    interval_method: str = "wilson-games"


def tie_groups(rows: list[Row]) -> None:
    """Number the rows (already in standing order) into groups whose intervals overlap the
    interval of the group's first row: a row joins the group above it while the published
    95% intervals cannot tell it from that group's leader."""
    group, leader = 0, None
    for row in rows:
        lo, hi = row.standing["interval"]
        if leader is None or not (hi >= leader[0] and lo <= leader[1]):
            group += 1
            leader = (lo, hi)
        row.group = group
    sizes = Counter(r.group for r in rows)
    labels: dict[int, str] = {}
    for row in rows:
        row.group_size = sizes[row.group]
        if row.group_size > 1:
            row.tie_label = labels.setdefault(row.group, f"T{len(labels) + 1}")


def sae_window(doc: dict) -> Window:
    """The window most agents' SAE is over; `mixed` if some row's differs (printed per row then)."""
    windows = Counter((a["sae"]["b0"], a["sae"]["b_max"]) for a in doc["agents"] if a["sae"]["b0"] is not None)
    checkpoints = doc["provenance"]["config"]["checkpoints"]
    if not windows:
        positive = [c for c in checkpoints if c > 0]
        if len(positive) < 2:
            # One non-zero checkpoint is an empty window (B0 = B_max): there is no area to print.
            return Window(
                None, None, checkpoints, missing="one non-zero checkpoint" if positive else "no non-zero checkpoint"
            )
        return Window(positive[0], positive[-1], checkpoints)
    (b0, b_max), _ = windows.most_common(1)[0]
    return Window(b0, b_max, checkpoints, mixed=len(windows) > 1)


def faulted_pairings(doc: dict, environments: list[dict] | None) -> dict[tuple[str, str], int]:
    """{(a, b): pairing games a lost to its own faults against b}: in each environment a
    faulted and b did not, a's pairing with b counts lost (void for b). Empty without the
    per-environment results."""
    out: Counter[tuple[str, str]] = Counter()
    per_pair = doc["provenance"]["config"].get("pairing_games") or 0
    for env in environments or []:
        status = {a["name"]: a["status"] for a in env["agents"]}
        live = [n for n, st in status.items() if st == "ok"]
        for name, st in status.items():
            if st not in ("ok", "absent"):
                for other in live:
                    out[(name, other)] += per_pair
    return dict(out)


def standings(doc: dict, environments: list[dict] | None = None, struck: dict[str, str] | None = None) -> Table:
    """The standings table of a round: sorted by published rank, or by name without a standing.
    A row's faulted games are the standing's; without a standing they are counted from
    `environments` when given (the per-environment results)."""
    field_by_name = {f["name"]: f for f in doc["field"]}
    published = doc["round"]["standing_published"]
    agents = doc["agents"]
    if published:
        order = sorted(agents, key=lambda a: (a["standing"]["rank"] if a["standing"] else 10**9, a["name"]))
    else:
        order = sorted(agents, key=lambda a: a["name"])
    rows = []
    lost = Counter[str]()
    for (name, _), n in faulted_pairings(doc, environments).items():
        lost[name] += n
    for i, a in enumerate(order):
        entry = field_by_name.get(a["name"], {"kind": "?", "account": None, "digest": "?"})
        rows.append(
            Row(
                name=a["name"],
                index=i,
                kind=entry["kind"],
                account=entry["account"],
                digest=entry["digest"],
                record=a["record"],
                standing=a["standing"],
                sae=a["sae"],
                faults=fault_counts(a["faults"]),
                faulted_envs=a["faulted_envs"],
                elo=a.get("elo"),
                faulted_games=a["standing"]["faulted_games"] if a["standing"] else lost[a["name"]],
                invalidated=(struck or {}).get(entry["account"] or a["name"]),
            )
        )
    if published and all(r.standing for r in rows):
        tie_groups(rows)
        for r in rows:
            lo, hi = r.standing["interval"]
            r.bar = svg.interval_bar(r.standing["value"], lo, hi)
    notes = []
    if not published:
        notes.append(
            f"A field of {len(doc['field'])}: fewer than {MIN_FIELD_FOR_STANDING} entrants, so no standing "
            "is published (the rules: below that a rank is the individual pairings, not a summary of "
            "them). The pairwise results below are the result."
        )
    methods = {a["standing"].get("method") for a in agents if a["standing"]}
    method = next(iter(methods)) if len(methods) == 1 and None not in methods else "wilson-games"
    return Table(rows, published, sae_window(doc), notes, method)


def point_interval(rate: float, games: int) -> tuple[float, float]:
    """A curve point's 95% interval: Wilson's over the games it was measured on (draws apart,
    so a win rate is a proportion of games); [0, 1] over none."""
    interval = wilson(min(1.0, max(0.0, rate)), games)
    return (0.0, 1.0) if interval is None else interval


def curve_figures(doc: dict, table: Table, highlight: str | None = None) -> dict:
    """Win-rate and draw-rate figures (one line per agent, in table order, each point with its
    95% interval) and their data table. A point is measured on games_per_checkpoint games in
    each environment, so it stands on that many times the environments. With `highlight`, that
    agent's curve is drawn over the field's in grey (an agent's own page)."""
    config = doc["provenance"]["config"]
    checkpoints = config["checkpoints"]
    games = (config.get("games_per_checkpoint") or 0) * (config.get("environments") or 0)
    by_name = {a["name"]: a for a in doc["agents"]}
    win, draw, rows = [], [], []
    for row in table.rows:
        curve = by_name[row.name]["curve"]
        win.append(
            svg.Series(
                row.name,
                row.index,
                [(p["games"], p["win_rate"]) for p in curve],
                [point_interval(p["win_rate"], games) for p in curve],
            )
        )
        draw.append(
            svg.Series(
                row.name,
                row.index,
                [(p["games"], p["draw_rate"]) for p in curve],
                [point_interval(p["draw_rate"], games) for p in curve],
            )
        )
        rows.append((row, {p["games"]: p for p in curve}))
    who = "" if highlight is None else f"{highlight} against the field: "
    return {
        "win": svg.curve_figure(
            f"{who}win rate against random at each checkpoint", checkpoints, win, "win rate against random", highlight
        ),
        "draw": svg.curve_figure(
            f"{who}draw rate against random at each checkpoint",
            checkpoints,
            draw,
            "draw rate against random",
            highlight,
        ),
        "checkpoints": checkpoints,
        "rows": rows,
        "games": games,
        "intervals": {
            row.name: {p["games"]: point_interval(p["win_rate"], games) for p in by_name[row.name]["curve"]}
            for row in table.rows
        },
    }


@dataclass
class EnvColumn:
    label: str
    name: str | None
    id: str | None
    rules: str | None


def env_matrix(doc: dict, environments: list[dict], table: Table) -> dict:
    """Per-environment results: a column per environment (by label, and by name where the
    tier's rules are public), a row per agent, and each agent's distribution figures."""
    columns = [
        EnvColumn(e["label"], e["name"], e["id"], rules_label(e["spec"]["rules"]) if e["spec"] else None)
        for e in environments
    ]
    # One pass per agent over dicts by name, formatting each cell as it goes (no per-cell
    # objects: a 60-agent, 28-environment round has 1,680 cells, a site a hundred such rounds).
    here = [{a["name"]: a for a in env["agents"]} for env in environments]
    names = {row.name for row in table.rows}
    scored = any(a["score"] is not None for env in environments for a in env["agents"] if a["name"] in names)
    dist_rows, body = [], []
    for row in table.rows:
        values, faulted = [], 0
        name = row.name
        parts = [f'<tr><th scope="row">{escape(name)}</th>']
        for agents in here:
            a = agents.get(name)
            status = None if a is None else a["status"]
            if status is None or status == "absent":
                parts.append('<td class="muted">—</td>')
                continue
            last = a["curve"][-1]["win_rate"] if a["curve"] else None
            v = a["score"] if scored else last
            if status == "ok":
                if v is not None:
                    values.append(v)
                shown = fmt_rate(v, 2)  # the text, and the heat where there is a value
                shade = "0.00" if v is None else shown
                r = a["record"]
                parts.append(
                    f'<td class="num heat" style="--v: {shade}" title="{r["wins"]}-{r["draws"]}-'
                    f'{r["losses"]} of {r["games"]}; final win rate {fmt_rate(last)}">'
                    f"{shown}</td>"
                )
            else:
                faulted += 1
                kind = escape(status)
                parts.append(f'<td class="faultcell" title="faulted: {kind}">{kind}</td>')
        parts.append("</tr>")
        body.append("".join(parts))
        dist_rows.append(svg.Distribution(row.name, values, faulted))
    if scored:
        title = "Each agent's score (match points per pairing game) in each environment"
        axis = "score in one environment (1 win, 1/2 draw, 0 loss, averaged over its pairing games)"
    else:
        title = "Each agent's final win rate against random in each environment"
        axis = "win rate at the last checkpoint in one environment"
    return {
        "columns": columns,
        "body": Markup("\n".join(body)),
        "scored": scored,
        "distribution": svg.distribution_figure(title, dist_rows, axis),
        "distribution_title": title,
    }


def pairwise_matrix(doc: dict, table: Table, environments: list[dict] | None = None) -> dict:
    """Head-to-head results as a matrix in table order: row agent's W-D-L against the column's,
    its losses counting the pairing games it lost to its own faults (from `environments`)."""
    names = [r.name for r in table.rows]
    result: dict[tuple[str, str], tuple[int, int, int, int]] = {}
    for p in doc["pairwise"]:
        result[(p["a"], p["b"])] = (p["a_wins"], p["draws"], p["b_wins"], p["games"])
        result[(p["b"], p["a"])] = (p["b_wins"], p["draws"], p["a_wins"], p["games"])
    faulted = faulted_pairings(doc, environments)
    return {
        "names": names,
        "body": _pairwise_rows(names, result, faulted),
        "pairs": len(doc["pairwise"]),
        "faulted": bool(faulted),
    }


_SELF_CELL = '<td class="self">·</td>'
_VOID_CELL = '<td class="muted" title="no game counted: void, an opponent had faulted">void</td>'


def _pairwise_rows(
    names: list[str], result: dict[tuple[str, str], tuple[int, int, int, int]], faulted: dict[tuple[str, str], int]
) -> Markup:
    """The matrix's rows as HTML, built here rather than in a template loop: a 60-agent field
    is 3,600 cells, and a page of them must render in milliseconds (benchmarks/bench_site.py).
    A cell's text after its row label depends only on the W-D-L-G result, and results repeat
    across a field, so each distinct result is formatted once."""
    out = []
    tails: dict[tuple[int, int, int, int], str] = {}
    for a in names:
        label = escape(a)
        cells = []
        for b in names:
            r = result.get((a, b))
            lost = faulted.get((a, b), 0)
            if a == b:
                cells.append(_SELF_CELL)
            elif lost:  # games the row agent lost to its own faults: counted lost, and marked
                w, d, lo, g = r if r is not None else (0, 0, 0, 0)
                cells.append(
                    f'<td class="num faultcell" title="{label}: {w} won, {d} drawn, {lo} lost of {g} counted; '
                    f'{lost} more lost to its own faults">{w}–{d}–{lo + lost}<span class="fmark">✕{lost}</span></td>'
                )
            elif r is None or r[3] == 0:  # no game counted: the pairing was void (an opponent died)
                cells.append(_VOID_CELL)
            else:
                tail = tails.get(r)
                if tail is None:
                    w, d, lo, g = r
                    tail = tails[r] = (
                        f': {w} won, {d} drawn, {lo} lost of {g} ({(w + d / 2) / g:.2f} points a game)">'
                        f"{w}–{d}–{lo}</td>"
                    )
                cells.append(f'<td class="num" title="{label}{tail}')
        out.append(f'<tr><th scope="row">{label}</th>{"".join(cells)}</tr>')
    return Markup("\n".join(out))


def provenance(doc: dict) -> dict:
    """The provenance block of a round page: where every number comes from."""
    p = doc["provenance"]
    config = p["config"]
    shown = [
        ("tier", config.get("tier")),
        ("environments", config.get("environments")),
        ("budget", config.get("budget")),
        ("checkpoints", ", ".join(str(c) for c in config["checkpoints"])),
        ("games per checkpoint", config.get("games_per_checkpoint")),
        ("pairing games per pair", config.get("pairing_games")),
        ("sandbox", config.get("sandbox")),
        ("disclosure", config.get("disclosure")),
        ("arena retries", config.get("arena_retries")),
        ("arena faults tolerated", config.get("max_arena_faults")),
    ]
    if config.get("seed") is not None:
        shown.append(("round seed", config["seed"]))
    if config.get("public_round"):
        shown.append(("public round (generalisation gap)", config["public_round"]["id"]))
    return {
        "arena_version": p["arena_version"],
        "commit": p["commit"],
        "seed_commitment": p["seed_commitment"],
        "tier_seed_commitment": p.get("tier_seed_commitment"),
        "config": shown,
        "limits": sorted(p["limits"].items()),
        "command": p["execution"]["command"],
        "shards": p["execution"]["shards"],
        "arena_faults": p["execution"]["arena_faults"],
        "host": p["execution"].get("host"),
        "games": doc["games"],
        "disclosure": doc["disclosure"],
    }


def extras(doc: dict, table: Table) -> list[dict]:
    """Reported, not ranked on: spread across environments, endings, generalisation gap, Elo."""
    by_name = {a["name"]: a for a in doc["agents"]}
    return [
        {
            "row": row,
            "spread": by_name[row.name]["spread"],
            "endings": by_name[row.name]["endings"],
            "gap": by_name[row.name].get("generalisation_gap"),
        }
        for row in table.rows
    ]
