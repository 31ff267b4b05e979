"""The site's build: `build(rounds_dir, out_dir, ...)` renders every page into a folder.

From rounds/, docs/, the accounts registry and site_templates/.

What is shown (docs/architecture.md, "Results, disclosure, site"; docs/rules.md §6 and §8):
- a final-tier round appears nowhere until the competition config says that final was
  published after review; until then the leaderboard says "final standings pending review";
- a private round (grader.season.disclosure.private_reasons: fewer than 8 environments, a field
  under 8, or a requested run) appears nowhere: its entrants and staff read it, the public
  site does not list it or build its pages;
- the leaderboard follows the rules by itself: the published final, else the newest round of
  the professor's series (ladder tier, not requested: a public-tier round is practice) that is
  complete, public, on 8 or more environments and with a standing (a field of 8 or more);
  nothing listed by hand picks it;
- a result staff invalidated (config/invalidations.yaml) is struck through with the reason;
- the frozen entry of each account is on its page from the freeze on;
- replays exist of games whose public record carries moves (a round whose rules are public)
  as soon as the round is published, and of the other rounds once the competition ended.
"""

from __future__ import annotations

import datetime as dt
import gc
import hashlib
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from grader.common.checkout import source_tree
from grader.common.limits import DEFAULT_LIMITS
from grader.rounds.aggregates import MIN_FIELD_FOR_STANDING
from grader.season.accounts import Registry, load_registry
from grader.season.disclosure import private_reasons
from grader.season.site_settings import SeriesRound, SiteConfig, load_site_config
from grader.site import docs as docs_mod
from grader.site import environments as envs_mod
from grader.site import model, replays, svg
from grader.site.data import RoundCache, RoundSource, load_rounds
from grader.site.render import COMMIT_PLACEHOLDER, Writer, check_out_folder, digest, make_environment, tree_digest

REPO = Path(__file__).resolve().parents[2]


def default_tree() -> Path:
    """The arena's source tree for the templates and docs: beside the package, or the checkout a
    `pip install .` was run in (grader.common.checkout)."""
    return source_tree() or REPO


SITE_CODE = Path(__file__).resolve().parent


@dataclass
class BuildReport:
    pages: int
    rendered: int
    reused: int
    written: int
    removed: int
    seconds: float
    warnings: list[str] = field(default_factory=list)

    def line(self) -> str:
        return (
            f"{self.pages} pages ({self.rendered} rendered, {self.reused} unchanged), {self.written} files "
            f"written, {self.removed} removed, in {self.seconds:.2f} s"
        )


DATA_PATHS = ("rounds", "docs", "accounts.yaml", "site.yaml", "config")


def data_commit_of(folder: Path, paths: tuple[str, ...] = (".",)) -> str:
    """The git commit `folder` is at, `-dirty` if `paths` there (the data) differ from it."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(folder), *args], capture_output=True, text=True, check=True, timeout=30
        ).stdout.strip()

    try:
        commit = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--", *paths)
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired):
        return "unknown (not built from a git checkout)"
    return commit + ("-dirty" if dirty else "")


def visible(r: RoundSource, config: SiteConfig) -> bool:
    """Whether the public site shows round `r`: never a private one (grader.season.disclosure's one
    rule: a requested run, fewer than 8 environments, a field under 8, or a final until that
    very round is published after review)."""
    final = config.competition.final
    return not private_reasons(r.summary, final.round_id if final.status == "published" else None)


def private(r: RoundSource) -> bool:
    """A round only its entrants and staff read, whatever the state of the final."""
    return bool(private_reasons(r.summary, r.id))


SERIES_TIERS = ("public", "ladder", "final")
LEADING_TIERS = ("ladder", "final")  # the tiers whose rounds may lead the board


def in_series(r: RoundSource) -> bool:
    """A round of the professor's series: a public, ladder or final round (round.yml lets staff
    dispatch any of the three), never a paper round (research) nor a requested run."""
    return r.tier in SERIES_TIERS and not r.summary["provenance"]["config"].get("requested")


def can_lead(r: RoundSource) -> bool:
    """Whether round `r` may stand on the leaderboard (docs/rules.md §5): complete, public, not
    research, on 8 or more environments, with a standing published for a field of 8 or more."""
    info = r.summary["round"]
    # The professor's ladder or the final only: a public-tier round is practice (the rules).
    return (
        r.tier in LEADING_TIERS
        and in_series(r)
        and info["status"] == "complete"
        and not private(r)
        and not info["research"]
        and info["standing_published"]
        and len(r.summary["field"]) >= MIN_FIELD_FOR_STANDING
    )


def round_date(
    r: RoundSource, entry: SeriesRound | None, config: SiteConfig, added: dict[str, str] | None = None
) -> str | None:
    """The date the site prints for a round: site.yaml's, else the published final's, else the
    day its file was first committed to rounds/ (git), else None."""
    if entry is not None and entry.date:
        return entry.date
    final = config.competition.final
    if r.tier == "final" and final.round_id == r.id and final.published_at is not None:
        return final.published_at.date().isoformat()
    return (added or {}).get(r.path.name)


def added_dates(folder: Path) -> dict[str, str]:
    """{file name: the day (YYYY-MM-DD) the commit that added it to `folder` was made}, from git;
    empty outside a git checkout or in a shallow one's first commit (all files look added then,
    so a date is kept only when the history holds more than that one commit)."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(folder), *args], capture_output=True, text=True, check=True, timeout=60
        ).stdout

    try:
        if not folder.is_dir() or git("rev-parse", "--is-shallow-repository").strip() == "true":
            return {}
        log = git("log", "--diff-filter=A", "--relative", "--format=%x00%cs", "--name-only", "--", ".")
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired):
        return {}
    out: dict[str, str] = {}
    for block in log.split("\0")[1:]:
        day, *names = block.strip().splitlines()
        for name in names:
            out.setdefault(Path(name).name, day)  # newest first: the latest time it was added
    return out


def leaderboard_round(
    rounds: dict[str, RoundSource], config: SiteConfig, added: dict[str, str] | None = None
) -> RoundSource | None:
    """The round the leaderboard shows: the published final, else the newest round of the
    series that can stand on the board (by date; a round dated by nobody is older than a dated
    one, and among equals site.yaml's order, then the id, decide)."""
    final = config.competition.final
    eligible = [r for r in rounds.values() if can_lead(r)]
    for r in eligible:
        if r.tier == "final" and final.status == "published" and final.round_id == r.id:
            return r
    order = {e.id: i for i, e in enumerate(config.series)}
    # A final leads only once published; until then the newest public or ladder round does.
    before_final = [r for r in eligible if r.tier != "final"]
    if not before_final:
        return None
    return max(
        before_final,
        key=lambda r: (round_date(r, config.series_entry(r.id), config, added) or "", order.get(r.id, -1), r.id),
    )


def _when(moment: dt.datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def calendar(config: SiteConfig) -> dict:
    """The competition's phase and dates as the board prints them (config/competition.yaml). The
    phase is the one the staff actions set, not one read from the clock: a static page is read
    long after it is built, so the dates are printed for the reader to compare."""
    comp = config.competition
    final = comp.final
    if comp.ended:
        phase = "ended: the final is published and its appeal window has closed"
    elif final.status == "published":
        phase = "the final is published; appeals are open"
    elif final.status == "pending_review":
        phase = "the final has been played and is under staff review"
    elif comp.final_at is None:
        phase = "open: submissions are accepted; the final is not scheduled yet"
    else:
        phase = "open until the freeze: submissions are accepted until then"
    return {
        "phase": phase,
        "freeze_at": _when(comp.freeze_at),
        "final_at": _when(comp.final_at),
        "published_at": _when(final.published_at),
        "appeals_close_at": _when(comp.appeals_close_at),
    }


def frozen_entries(
    rounds: list[RoundSource], config: SiteConfig, rounds_dir: Path, now: dt.datetime | None = None
) -> dict[str, dict]:
    """{handle: its frozen entry}, from the freeze on: the submission each approved account had
    on main when the field froze (what the final plays), with its digest, the commit of that
    last change to `submissions/<handle>/` and its time (the upload time). Read from git at the
    freeze; outside a checkout holding that history, the digests of the final's field in
    `rounds` (when it is there). Empty before the freeze. Digests only, no result: shown while
    the final is pending review too."""
    import tempfile

    from grader.documents.yaml_io import DocumentError
    from grader.play.field import GitError, build_field, commit_at, export_tree

    freeze_at = config.competition.freeze_at
    now = now or dt.datetime.now(dt.UTC)
    # Frozen by the clock, or by the final's state (a final played is past the freeze), so
    # that a page built from a state says the same whenever it is built.
    if freeze_at is None or not (config.competition.frozen(now) or config.competition.final.status != "not_run"):
        return {}
    from_final = {}  # without the history: the field of the final in rounds/ (digests, no time)
    final_id = config.competition.final.round_id
    for r in rounds:
        if r.id == final_id:
            from_final = {
                f["account"]: {"digest": f["digest"], "commit": None, "uploaded_at": None}
                for f in r.summary["field"]
                if f["account"] and f["kind"] == "submission"
            }
    try:
        top = Path(
            subprocess.run(
                ["git", "-C", str(rounds_dir), "rev-parse", "--show-toplevel"],
                capture_output=True,
                text=True,
                check=True,
                timeout=30,
            ).stdout.strip()
        )
        if Path(rounds_dir).resolve() != (top / "rounds").resolve():
            return from_final  # not an arena's checkout (rounds/ at its top): its history is another's
        commit = commit_at(top, freeze_at)
        with tempfile.TemporaryDirectory(prefix="arena-freeze-") as scratch:
            export_tree(top, commit, Path(scratch))
            field = build_field(Path(scratch), "final", None, now=freeze_at)
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired, GitError, DocumentError, ValueError):
        return from_final
    if not field.entrants:
        return from_final
    out = {}
    for entrant in field.entrants:
        change = _commit_at(top, f"submissions/{entrant.handle}", freeze_at)
        out[entrant.handle] = {
            "digest": entrant.digest,
            "commit": change[0] if change else None,
            "uploaded_at": change[1] if change else None,
        }
    return out


def _commit_at(top: Path, path: str, moment: dt.datetime) -> tuple[str, str] | None:
    """(hash, UTC time) of the last commit that changed `path` (from the repository's top)
    before `moment`; None when the history has none."""
    try:
        found = subprocess.run(
            ["git", "-C", str(top), "log", "-1", "--format=%H %ct", f"--before={moment.isoformat()}", "--", path],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired):
        return None
    if len(found) != 2:
        return None
    when = dt.datetime.fromtimestamp(int(found[1]), dt.UTC)
    return found[0], when.strftime("%Y-%m-%d %H:%M UTC")


def _accounts(path: Path | None) -> tuple[Registry | None, str | None]:
    if path is None:
        return None, "no accounts registry was given to this build"
    if not path.exists():
        return None, f"the accounts registry {path.name} does not exist yet"
    return load_registry(path), None


def arena_inputs() -> dict:
    """What pages render that is neither a round, a setting nor the site's own code and
    templates: the arena's registries and limits, as data (so a page whose source changes
    is rendered again, and no source file outside the site is read to know it)."""
    return {
        "fault_kinds": list(model.FAULT_KINDS),
        "limits": DEFAULT_LIMITS.rows(),
        "public_tier": envs_mod.public_tier_version(),
    }


class SiteBuild:
    """One build: the inputs loaded once, then each page declared with its inputs."""

    def __init__(
        self,
        rounds_dir: Path,
        out_dir: Path,
        docs_dir: Path | None,
        accounts: Path | None,
        config: SiteConfig,
        templates: Path,
        cache_dir: Path | None,
        commit: str,
        validate: bool,
    ):
        self.config = config
        self.templates = templates
        cache = RoundCache(None if cache_dir is None else cache_dir / "rounds")
        loaded = load_rounds(rounds_dir, cache, validate)
        self.rounds = [r for r in loaded if visible(r, config)]
        self.frozen = frozen_entries(loaded, config, rounds_dir)
        self.by_id = {r.id: r for r in self.rounds}
        self.added = added_dates(rounds_dir)
        self.registry, self.accounts_note = _accounts(accounts)
        self.docs = docs_mod.find_docs(docs_dir)
        self.docs_dir = docs_dir
        self.handles = self._handles()
        self.warnings: list[str] = []
        self._histories: dict[str, list[dict]] | None = None
        self._keys: dict[str, list] = {}
        env = make_environment(templates)
        # A few short items, one line at 1280 px: the rules have their own, every other
        # document is on the Documents page.
        nav = [("index.html", "Leaderboard"), ("rounds/index.html", "Rounds"), ("environments.html", "Environments")]
        nav += [(f"{d.stem}.html", d.nav) for d in self.docs if d.stem == "rules"]
        nav += [("docs.html", "Docs")] if any(d.stem != "rules" for d in self.docs) else []
        nav += [("accounts/index.html", "Accounts"), ("kit.html", "Kit")]
        common = {
            "site_name": config.series_name,
            "nav": nav,
            "announcement": config.announcement,
            "fault_words": model.FAULT_WORDS,
            "data_commit": COMMIT_PLACEHOLDER,
            "svg": svg,
        }
        # What every page shows; anything else a page shows is in that page's own inputs, so
        # publishing a round re-renders the pages that show it, not the whole site.
        site_key = digest(
            tree_digest(templates),
            tree_digest(SITE_CODE, "*.py"),
            arena_inputs(),
            nav,
            config.series_name,
            config.announcement,
        )
        self.writer = Writer(out_dir, env, site_key, commit, common, cache_dir / "pages" if cache_dir else None)

    def _handles(self) -> dict[str, dict]:
        """Every account with a page: the registry's, and any account a round names."""
        out: dict[str, dict] = {}
        if self.registry is not None:
            for a in self.registry.accounts:
                out[a.handle] = {"handle": a.handle, "approved": a.approved, "staff": a.staff, "registered": True}
        for r in self.rounds:
            for f in r.summary["field"]:
                if f["account"] and f["account"] not in out:
                    out[f["account"]] = {"handle": f["account"], "approved": None, "staff": False, "registered": False}
        return out

    # -- pages -----------------------------------------------------------------------------
    def run(self) -> None:
        self.writer.text("style.css", (self.templates / "style.css").read_text(encoding="utf-8"))
        self.writer.text(".nojekyll", "")
        self.leaderboard()
        self.round_list()
        for r in self.rounds:
            self.round_page(r)
        self.documents()
        self.environments()
        self.accounts()
        self.kit()
        for r in self.rounds:
            self.replays(r)

    def _key(self, r: RoundSource) -> list:
        """What a page that shows round `r` depends on: its file and its series entry and date."""
        if r.id not in self._keys:
            entry = self.config.series_entry(r.id)
            self._keys[r.id] = [
                r.sha256,
                None if entry is None else [entry.title, entry.date],
                round_date(r, entry, self.config, self.added),
                self.config.struck(r.id),
            ]
        return self._keys[r.id]

    def _entry(self, r: RoundSource) -> dict:
        entry = self.config.series_entry(r.id)
        return {
            "id": r.id,
            "title": entry.title if entry and entry.title else None,
            "date": round_date(r, entry, self.config, self.added),
            "in_series": in_series(r),
            "info": r.summary["round"],
            "disclosure": r.summary["disclosure"],
            "config": r.summary["provenance"]["config"],
            "field_size": len(r.summary["field"]),
        }

    def leaderboard(self) -> None:
        lb = leaderboard_round(self.by_id, self.config, self.added)
        final = self.config.competition.final
        pending = final.status == "pending_review"
        dates = calendar(self.config)
        newest = (
            None
            if lb is not None or not self.rounds
            else max(
                self.rounds,
                key=lambda r: (round_date(r, self.config.series_entry(r.id), self.config, self.added) or "", r.id),
            )
        )

        def context() -> dict:
            ctx = {
                "round": None,
                "table": None,
                "pending": pending,
                "series": self.config.series_name,
                "handles": self.handles,
                "pairwise": None,
                "note": self.config.competition_note,
                "calendar": dates,
                "is_final": lb is not None and lb.tier == "final",
                "newest": self._entry(newest) if newest is not None else None,
            }
            if lb is not None:
                table = model.standings(lb.summary, struck=self.config.struck(lb.id))
                ctx.update(round=self._entry(lb), table=table)
            return ctx

        self.writer.page(
            "index.html",
            "leaderboard.html",
            [
                self._key(lb) if lb else None,
                self._key(newest) if newest else None,
                pending,
                self.config.competition_note,
                dates,
            ],
            context,
        )

    def round_list(self) -> None:
        def context() -> dict:
            order = {e.id: i for i, e in enumerate(self.config.series)}
            series = sorted(
                (self._entry(r) for r in self.rounds if in_series(r)),
                reverse=True,
                key=lambda e: (e["date"] or "", order.get(e["id"], -1), e["id"]),
            )
            others = [self._entry(r) for r in self.rounds if not in_series(r)]
            return {"series_rounds": series, "other_rounds": others, "series": self.config.series_name}

        self.writer.page(
            "rounds/index.html",
            "rounds.html",
            [[self._key(r) for r in self.rounds], [e.id for e in self.config.series]],
            context,
        )

    def _replay_count(self, r: RoundSource) -> int:
        """How many replays round `r` has: every game of a round whose moves are published (its
        rules public), at once; of a full record only once the competition ended."""
        if r.profile == "open" or (r.profile == "full" and self.config.competition.ended):
            return r.summary["games"]["count"]
        return 0

    def round_page(self, r: RoundSource) -> None:
        def context() -> dict:
            doc = r.summary
            envs = r.environments()
            table = model.standings(doc, envs, struck=self.config.struck(r.id))
            return {
                "round": self._entry(r),
                "table": table,
                "curves": model.curve_figures(doc, table),
                "matrix": model.env_matrix(doc, envs, table),
                "pairwise": model.pairwise_matrix(doc, table, envs),
                "prov": model.provenance(doc),
                "extras": model.extras(doc, table),
                "handles": self.handles,
                "replays": self._replay_count(r),
                "ended": self.config.competition.ended,
                "elo": doc["elo"],
            }

        self.writer.page(
            f"rounds/{r.id}.html",
            "round.html",
            [self._key(r), self._replay_count(r), self.config.competition.ended],
            context,
        )
        self.writer.copy(f"data/{r.id}.yaml", r.path, r.sha256)
        games = r.games_path()
        if games.exists():
            r.check_games_file()
            self.writer.copy(f"data/{r.summary['games']['path']}", games, r.games_sha256())
        else:
            self.warnings.append(f"{r.id}: its games file is missing; the round page links none")

    def documents(self) -> None:
        files = {f"{d.stem}.html" for d in self.docs}
        if self.docs_dir is not None:
            for extra in sorted(self.docs_dir.glob("*.json")):
                files.add(extra.name)
                self.writer.copy(extra.name, extra, hashlib.sha256(extra.read_bytes()).hexdigest())
        limits = DEFAULT_LIMITS.rows()
        for d in self.docs:

            def context(d=d) -> dict:
                body, warnings = docs_mod.render_doc(d, files)
                self.warnings.extend(warnings)
                return {"doc": d, "body": body}

            self.writer.page(f"{d.stem}.html", "doc.html", [d.text, limits, sorted(files)], context)
        listed = [{"href": f"{d.stem}.html", "title": d.title, "summary": docs_mod.summary(d)} for d in self.docs]
        if any(d.stem != "rules" for d in self.docs):
            self.writer.page("docs.html", "docs.html", [listed], lambda: {"docs": listed})

    def environments(self) -> None:
        ladder_inputs = [(r.id, r.sha256) for r in self.rounds if r.tier in ("ladder", "final")]
        open_inputs = [(r.id, r.sha256) for r in self.rounds if r.profile == "open"]

        def context() -> dict:
            public = envs_mod.public_groups()
            envs_mod.attach_rounds(public, self.rounds)
            ladder, ladder_withheld = envs_mod.disclosed_groups(self.rounds, "ladder")
            final, final_withheld = envs_mod.disclosed_groups(self.rounds, "final")
            return {
                "public": public,
                "ladder": ladder,
                "ladder_withheld": ladder_withheld,
                "final": final,
                "final_withheld": final_withheld,
                "pending": self.config.competition.final.status == "pending_review",
                "ended": self.config.competition.ended,
            }

        self.writer.page(
            "environments.html",
            "environments.html",
            [ladder_inputs, open_inputs, self.config.competition.final.status, self.config.competition.ended],
            context,
        )

    def history(self, handle: str) -> list[dict]:
        """Every visible round the account entered, newest first where dates are known."""
        if self._histories is None:  # one pass over the rounds for every account
            self._histories = {}
            series_order = {e.id: i for i, e in enumerate(self.config.series)}
            for r in self.rounds:
                doc = r.summary
                agents = {a["name"]: a for a in doc["agents"]}
                entry = None
                for f in doc["field"]:
                    if not f["account"] or f["name"] not in agents:
                        continue
                    entry = entry or self._entry(r)
                    agent = agents[f["name"]]
                    self._histories.setdefault(f["account"], []).append(
                        {
                            "round": entry,
                            "name": f["name"],
                            "digest": f["digest"],
                            "agent": agent,
                            "faults": model.fault_counts(agent["faults"]),
                            "order": (series_order.get(r.id, -1), r.id),
                        }
                    )
        return sorted(
            self._histories.get(handle, []), key=lambda x: (x["round"]["date"] or "", x["order"]), reverse=True
        )

    def accounts(self) -> None:
        entered: dict[str, list] = {h: [] for h in self.handles}
        for r in self.rounds:
            for f in r.summary["field"]:
                if f["account"] in entered:
                    entered[f["account"]].append(self._key(r))

        def index_context() -> dict:
            return {
                "accounts": sorted(self.handles.values(), key=lambda a: a["handle"]),
                "counts": {h: len(v) for h, v in entered.items()},
                "note": self.accounts_note,
            }

        self.writer.page(
            "accounts/index.html",
            "accounts.html",
            [sorted((h, len(entered[h]), a) for h, a in self.handles.items()), self.accounts_note],
            index_context,
        )
        for handle, account in self.handles.items():

            def context(handle=handle, account=account) -> dict:
                rows = self.history(handle)
                windows = {
                    (x["agent"]["sae"]["b0"], x["agent"]["sae"]["b_max"]) for x in rows if x["agent"]["sae"]["b0"]
                }
                latest = self.agent_view(rows[0]) if rows else None
                return {
                    "account": account,
                    "rows": rows,
                    "window_mixed": len(windows) > 1,
                    "short_digest": model.short_digest,
                    "latest": latest,
                    "frozen": self.frozen.get(handle),
                    "freeze_at": _when(self.config.competition.freeze_at),
                }

            self.writer.page(
                f"accounts/{handle}.html", "account.html", [account, entered[handle], self.frozen.get(handle)], context
            )

    def agent_view(self, row: dict) -> dict:
        """One agent in one round, for its owner's page: its curve against the field, its
        environments (score, W-D-L, or the fault that ended it there, in words) and its faults."""
        r = self.by_id[row["round"]["id"]]
        envs = r.environments()
        table = model.standings(r.summary, envs, struck=self.config.struck(r.id))
        name = row["name"]
        me = next(t for t in table.rows if t.name == name)
        per_env = []
        for env in envs:
            a = next((x for x in env["agents"] if x["name"] == name), None)
            if a is None or a["status"] == "absent":
                continue
            per_env.append(
                {
                    "label": env["label"],
                    "name": env["name"],
                    "status": a["status"],
                    "score": a["score"],
                    "record": a["record"],
                    "final": a["curve"][-1]["win_rate"] if a["curve"] else None,
                    "words": model.FAULT_WORDS.get(a["status"]),
                }
            )
        return {
            "round": row["round"],
            "row": me,
            "curves": model.curve_figures(r.summary, table, highlight=name),
            "envs": per_env,
            "faults": [(k, n, model.FAULT_WORDS[k]) for k, n in me.faults],
            "window": table.window,
        }

    def kit(self) -> None:
        zip_path, version_path = self.config.kit_zip, self.config.kit_version
        has_zip = zip_path is not None and zip_path.is_file()
        version = (
            version_path.read_bytes().decode("utf-8", "replace").strip()[:100]
            if version_path is not None and version_path.is_file()
            else None
        )  # a version line, shown as text: never fatal
        info, key = None, None
        if has_zip:
            blob = zip_path.read_bytes()
            sha = hashlib.sha256(blob).hexdigest()
            info = {"name": zip_path.name, "bytes": len(blob), "sha256": sha}
            self.writer.copy(f"kit/{zip_path.name}", zip_path, sha)
            key = kit_submission_key(blob)
        if version is not None:
            self.writer.text("kit/version", version + "\n")
        from grader.kit.build import submit_steps

        repository = self.config.repository
        if repository is None:
            self.warnings.append(
                "site.yaml sets no kit.repository: the kit page cannot link the repository that "
                "accounts and submissions go to"
            )
        self.writer.page(
            "kit.html",
            "kit.html",
            [info, version, repository, key],
            lambda: {
                "zip": info,
                "version": version,
                "repository": repository,
                "key": key,
                "steps": submit_steps(repository),
            },
        )

    def replays(self, r: RoundSource) -> None:
        count = self._replay_count(r)
        if count == 0:
            return
        games_sha = r.games_sha256()
        tier, profile = r.tier, r.profile
        games: list[dict] | None = None
        specs: dict[str, dict] | None = None

        def load() -> tuple[list[dict], dict[str, dict]]:
            nonlocal games, specs
            if games is None:
                games = r.games()
                specs = {e["label"]: e for e in r.environments()}
            return games, specs  # type: ignore[return-value]

        def index_context() -> dict:
            gs, envs = load()
            rows = [
                {"n": i + 1, "game": g, "replay": replays.replayable(g, envs[g["env"]]["spec"])}
                for i, g in enumerate(gs)
            ]
            return {"round": self._entry(r), "rows": rows, "hide": replays.redacted(tier, profile)}

        self.writer.page(f"replays/{r.id}/index.html", "replays.html", [self._key(r), games_sha], index_context)
        for n in range(1, count + 1):

            def context(n=n) -> dict:
                gs, envs = load()
                game = gs[n - 1]
                env = envs[game["env"]]
                return {
                    "round": self._entry(r),
                    "replay": replays.build_replay(n, game, env, tier, profile),
                    "count": count,
                }

            self.writer.page(f"replays/{r.id}/g{n:04d}.html", "replay.html", [self._key(r), games_sha, n], context)


def build(
    rounds_dir: str | Path,
    out_dir: str | Path,
    *,
    docs_dir: str | Path | None = None,
    accounts: str | Path | None = None,
    config: str | Path | SiteConfig | None = None,
    templates: str | Path | None = None,
    cache_dir: str | Path | None = None,
    data_commit: str | None = None,
    validate: bool = False,
    log: Callable[[str], None] | None = None,
) -> BuildReport:
    """Build the static site from `rounds_dir` into `out_dir`.

    `docs_dir` defaults to the repository's docs/; `config` is a site.yaml path (or a loaded
    SiteConfig; None: no series, no banner); `cache_dir` keeps parsed rounds and rendered pages
    for the next build (None: render everything); `data_commit` defaults to the git commit of
    `rounds_dir`. Returns what was done; raises ValueError (SiteDataError, DocumentError) on
    input it cannot render.
    """
    # The parsed rounds are millions of acyclic dicts and lists that live to the end of the
    # build: with the cycle collector on, its passes over that growing heap cost seconds.
    # The little cyclic garbage a build makes is collected when the collector is back on.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _build(rounds_dir, out_dir, docs_dir, accounts, config, templates, cache_dir, data_commit, validate, log)
    finally:
        if collecting:
            gc.enable()


def _build(
    rounds_dir, out_dir, docs_dir, accounts, config, templates, cache_dir, data_commit, validate, log
) -> BuildReport:
    start = time.perf_counter()
    log = log or (lambda message: print(message, file=sys.stderr))
    rounds_dir, out_dir = Path(rounds_dir), Path(out_dir)
    check_out_folder(out_dir)
    tree = default_tree()
    if docs_dir is None and (tree / "docs").is_dir():
        docs_dir = tree / "docs"
    site_config = (
        config if isinstance(config, SiteConfig) else load_site_config(None if config is None else Path(config))
    )
    # Without a rounds folder the data is the working folder's: only the site's inputs count
    # (a build step's own outputs there, such as the kit's version file, do not).
    commit = data_commit or (
        data_commit_of(rounds_dir)
        if rounds_dir.is_dir()
        else data_commit_of(Path.cwd(), tuple(p for p in DATA_PATHS if Path(p).exists()) or (".",))
    )
    site = SiteBuild(
        rounds_dir,
        out_dir,
        None if docs_dir is None else Path(docs_dir),
        None if accounts is None else Path(accounts),
        site_config,
        Path(templates) if templates else tree / "site_templates",
        None if cache_dir is None else Path(cache_dir),
        commit,
        validate,
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    site.run()
    removed = site.writer.finish()
    report = BuildReport(
        len([f for f in site.writer.files if f.endswith(".html")]),
        site.writer.rendered,
        site.writer.reused,
        site.writer.written,
        len(removed),
        time.perf_counter() - start,
        site.warnings,
    )
    for w in site.warnings:
        log(f"site: warning: {w}")
    return report


def kit_submission_key(blob: bytes) -> str | None:
    """The public key the kit zip `blob` seals submissions to (its kit.json), or None when it
    names none that is a key: the kit page shows it as text."""
    import base64
    import io
    import json
    import zipfile

    from grader.kit.build import KIT_FOLDER, MANIFEST_NAME

    try:
        with zipfile.ZipFile(io.BytesIO(blob)) as zf:
            key = json.loads(zf.read(f"{KIT_FOLDER}/{MANIFEST_NAME}")).get("submission_key")
        return key if isinstance(key, str) and len(base64.b64decode(key, validate=True)) == 32 else None
    except (KeyError, ValueError, zipfile.BadZipFile, AttributeError):
        return None
