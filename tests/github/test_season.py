"""A whole season, in order, through the commands the workflows run, against the fake hub.

One clone of main (a git repository whose commits carry the season's dates) and one fake
GitHub live for the whole season; each step runs the `arena ...` invocation of the workflow
step that does it in production (.github/workflows/*.yml) and asserts what its user sees: the
pull request's comment and status, the built site's board, the grade CSV, the appeal text,
verify's output. The rounds are small (8 entrants, so that a standing exists; 8 environments,
so that the round is public; a budget of 10 self-play games) and play in the local sandbox.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import urllib.request
from contextlib import redirect_stdout
from pathlib import Path

import pytest
import yaml
from nacl.public import PrivateKey

from grader.cli.main import main
from grader.documents.sealing import encode_key
from grader.history.owner_history import HistoryError, parse_history
from tests.github.conftest import LABEL, STAFF, agent_files, comment_event, pr_event
from tests.github.fakehub import OWNER, REPO

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]

ROOT = Path(__file__).resolve().parents[2]
STUDENTS = [
    (2001 + i, f"{name}-gh", name)
    for i, name in enumerate(("alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"))
]
MALLORY = (2099, "mallory-gh", "mallory")  # registered, never approved: never in a field
SEEDS = {"ARENA_LADDER_SEED": "season-ladder-seed", "ARENA_FINAL_SEED": "season-final-seed"}
FINAL_AT = "2026-12-14T09:00:00Z"
# Tiny rounds: 3 checkpoints so that every SAE has a window ([5, 10]); 2 games per pair.
SMALL = [
    "--budget",
    "10",
    "--checkpoints",
    "0,5,10",
    "--games-per-checkpoint",
    "2",
    "--pairing-games",
    "2",
    "--jobs",
    "2",
]


ADMIN = "ghp_season_staff_admin"


def git_run(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=60)


def api(hub, method: str, path: str, token: str, body: dict | None = None) -> tuple[int, object]:
    import urllib.error

    request = urllib.request.Request(
        hub.api + path,
        method=method,
        data=json.dumps(body or {}).encode(),
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def git(repo: Path, *args: str, date: str | None = None) -> str:
    env = os.environ | {
        "GIT_AUTHOR_NAME": "arena-bot",
        "GIT_AUTHOR_EMAIL": "arena-bot@example.org",
        "GIT_COMMITTER_NAME": "arena-bot",
        "GIT_COMMITTER_EMAIL": "arena-bot@example.org",
    }
    if date:
        env |= {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env, timeout=60
    ).stdout


class Season:
    """The clone of main and the paths every command is given."""

    def __init__(self, root: Path, hub) -> None:
        self.tmp = root
        self.repo = root / "main"
        self.hub = hub
        self.origin: Path | None = None  # GitHub's copy, once protected
        self.push_key = ""
        self.pulls = 0
        self.logs = io.StringIO()
        self.sites: list[Path] = []
        # round id -> the numbers of a private result (from the staff record), which no public
        # surface may carry
        self.private: dict[str, set[float]] = {}

    @property
    def accounts(self) -> str:
        return str(self.repo / "accounts.yaml")

    @property
    def config(self) -> str:
        return str(self.repo / "config" / "competition.yaml")

    @property
    def log(self) -> str:
        return str(self.repo / "requests" / "score.yaml")

    def write(self, files: dict[str, bytes]) -> None:
        for rel, data in files.items():
            (self.repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.repo / rel).write_bytes(data)

    def commit(
        self,
        message: str,
        date: str,
        route: str | None = None,
        author: tuple[int, str] = STAFF[:2],
        status: str = "success",
    ) -> str:
        """Commit, and (once `protect`ed) take it to GitHub's main by `route`: "workflow" (a
        push with the arena's push key, as round.yml, score.yml and competition.yml push) or
        "pull" (a pull request merged through the API once its status is green; a direct push
        of it is refused first). The head of main."""
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", message, date=date)
        if route is None:
            assert self.origin is None, f"{message!r}: main is protected; say by which route it arrives"
        elif route == "workflow":
            push = git_run(self.repo, "push", "-o", f"arena-credential={self.push_key}", "origin", "HEAD:main")
            assert push.returncode == 0, push.stderr
        else:
            refused = git_run(self.repo, "push", "-o", f"arena-credential=token:{ADMIN}", "origin", "HEAD:main")
            assert "GH013" in refused.stderr, refused.stderr
            code = self.merge_by_pull_request(message, author, status)
            if code != 200:
                git(self.repo, "reset", "-q", "--hard", "origin/main")
                return ""
        return git(self.repo, "rev-parse", "HEAD").strip()

    def protect(self, monkeypatch) -> None:
        """docs/deploy.md on the fake GitHub: the first push, `arena github setup`, the staff's
        commands it lists, setup again, and site.yaml's kit.repository merged by pull request."""
        from grader.github.setup import ENVIRONMENTS, PUSH_KEY_TITLE

        self.origin = self.tmp / "origin.git"
        git(self.tmp, "init", "-q", "--bare", "-b", "main", str(self.origin))
        git(self.repo, "remote", "add", "origin", str(self.origin))
        git(self.repo, "push", "-q", "origin", "main")
        self.hub.add_token(ADMIN, STAFF[1], STAFF[0], role="admin")
        self.hub.attach_origin(self.origin)
        monkeypatch.setenv("GITHUB_TOKEN", ADMIN)
        assert self.arena("github", "setup", "--repo", f"{OWNER}/{REPO}", "--api-url", self.hub.api) == 1
        key = self.tmp / PUSH_KEY_TITLE
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", PUSH_KEY_TITLE, "-f", str(key)], check=True
        )
        public = Path(f"{key}.pub").read_text().strip()
        self.hub.settings.deploy_keys.append({"id": 1, "title": PUSH_KEY_TITLE, "key": public, "read_only": False})
        self.push_key = "ssh:" + " ".join(public.split()[:2])
        self.hub.set_secret("ARENA_SUBMISSION_KEY", "set")
        for env, names in ENVIRONMENTS.items():
            for name in names:
                self.hub.set_secret(name, SEEDS.get(name, "set"), environment=env)
        self.hub.settings.variables["ARENA_SUBMISSION_PUBLIC_KEY"] = "set"
        assert self.arena("github", "setup", "--repo", f"{OWNER}/{REPO}", "--api-url", self.hub.api) == 0
        monkeypatch.setenv("GITHUB_TOKEN", "ghs_test_token")
        self.commit("site: the kit links the repository", "2026-11-01T09:30:00Z", route="pull")

    def merge_by_pull_request(self, message: str, author: tuple[int, str], status: str) -> int:
        """The commit as a pull request's head (GitHub keeps a fork's as refs/pull/N/head), its
        status as the submission check posts it (`status`: the verdict the season's check gave),
        merged by staff through the API. The merge's HTTP code; main pulled when it merged."""
        self.pulls += 1
        number = 100 + self.pulls
        git(self.origin, "fetch", "-q", str(self.repo), f"HEAD:refs/pull/{number}/head")
        pull = self.hub.open_pull_from_branch(number, author, f"refs/pull/{number}/head")
        api(
            self.hub,
            "POST",
            f"/repos/{OWNER}/{REPO}/statuses/{pull.head_sha}",
            "ghs_submission_check",
            {"state": status, "context": "arena/submission", "description": message},
        )
        code, _ = api(self.hub, "PUT", f"/repos/{OWNER}/{REPO}/pulls/{number}/merge", ADMIN)
        if code == 200:
            git(self.repo, "pull", "-q", "--ff-only", "origin", "main")
        return code

    def arena(self, *argv: str) -> int:
        """One `arena` command, run from the clone of main as the workflows run it; what it
        prints is kept as well (a workflow's log is public)."""
        cwd = os.getcwd()
        os.chdir(self.repo)
        out, err = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = Tee(out, self.logs), Tee(err, self.logs)
        try:
            return main(list(argv))
        finally:
            sys.stdout, sys.stderr = out, err
            os.chdir(cwd)

    def bot_comments(self, number: int) -> list[str]:
        return [c["body"] for c in self.hub.comments.get(number, []) if c["user"] == self.hub.bot]

    def site(self, name: str) -> Path:
        """`arena site build` as site.yml runs it (the checkout holds main's whole history)."""
        out = self.tmp / f"site-{name}"
        assert self.arena("site", "build", "--rounds", "rounds", "--out", str(out), "--no-cache") == 0
        self.sites.append(out)
        return out

    def round(self, tier: str, now: str, envs: str, shards: int, monkeypatch, name: str | None = None) -> str:
        """round.yml: the inputs checked, the field taken (smoke-tested), the shards played,
        merged and verified by replay; the final recorded as pending review; a private round
        (and the final) sealed out of rounds/. The round's id."""
        work = self.tmp / f"round-{name or tier}"
        assert (
            self.arena(
                "dispatch",
                "--config",
                self.config,
                "--now",
                now,
                "--tier",
                tier,
                "--budget",
                "10",
                "--envs",
                envs,
                "--shards",
                str(shards),
            )
            == 0
        )
        # The field job writes field/ in its checkout of main (a fresh runner's: no earlier field),
        # and field/ is never committed; the shards play it from the same place.
        shutil.rmtree(self.repo / "field", ignore_errors=True)
        assert (
            self.arena(
                "field",
                "--tier",
                tier,
                "--config",
                self.config,
                "--now",
                now,
                "--smoke",
                "local",
                "--copy-to",
                "field/entrants",
                "--out",
                "field/field.yaml",
                "--agents-file",
                "field/agents.txt",
            )
            == 0
        )
        shutil.copytree(self.repo / "field", work / "field")  # the field's artifact
        agents = (work / "field" / "agents.txt").read_text().splitlines()
        monkeypatch.setenv("ARENA_TIER_SEED", SEEDS[f"ARENA_{tier.upper()}_SEED"])
        monkeypatch.setenv("ARENA_ROUND_SEED", f"season-round-seed-{tier}")
        for shard in range(1, shards + 1):
            assert (
                self.arena(
                    "round",
                    "--tier",
                    tier,
                    "--agents",
                    *agents,
                    *SMALL,
                    "--envs",
                    envs,
                    "--shard",
                    f"{shard}/{shards}",
                    "--sandbox",
                    "local",
                    "--out",
                    str(work / f"shard-{shard}" / "rounds"),
                    "--private-out",
                    str(work / f"shard-{shard}" / "private"),
                )
                == 0
            )
        monkeypatch.delenv("ARENA_TIER_SEED")
        monkeypatch.delenv("ARENA_ROUND_SEED")
        parts = sorted(str(p) for p in work.glob("shard-*/private/*/") if p.is_dir())
        published = work / "published.txt"
        with published.open("w") as out, redirect_stdout(out):
            assert self.arena("merge", *parts, "--out", "rounds", "--private-out", str(work / "merged")) == 0
        results = published.read_text().strip()
        assert self.arena("verify", results, "--private", str(work / "merged")) == 0
        round_id = Path(results).stem
        # Each owner's history entry, their replays locked with the tier's seed, as the merge job
        # seals them (the entrants as the field artifact holds them), merged onto main.
        monkeypatch.setenv("ARENA_TIER_SEED", SEEDS[f"ARENA_{tier.upper()}_SEED"])
        assert (
            self.arena(
                "history",
                "seal",
                "--results",
                results,
                "--private",
                str(work / "merged"),
                "--field",
                str(work / "field" / "entrants"),
                "--out",
                str(work / "history"),
            )
            == 0
        )
        monkeypatch.delenv("ARENA_TIER_SEED")
        assert self.arena("history", "merge", str(work / "history"), "--into", ".") == 0
        # The command each shard records re-runs it: the entrants by the paths it played them from.
        shards_run = yaml.safe_load((self.repo / results).read_text())["provenance"]["execution"]["shards"]
        first = agents[0].split("=", 1)[0]
        assert len(shards_run) == shards, shards_run
        assert all(f" {first}=field/entrants/{first} " in command for command in shards_run), shards_run
        if tier == "final":
            assert (
                self.arena("competition", "--config", self.config, "--now", now, "final-pending", "--round", round_id)
                == 0
            )
        self.disclose(results, work / "merged")
        return round_id

    def disclose(self, results: str, staff: Path) -> None:
        """`arena disclose` as the merge job runs it last; a withheld round's numbers noted."""
        data = yaml.safe_load((self.repo / results).read_text())
        assert self.arena("disclose", results, "--config", self.config) == 0
        round_id = data["round"]["id"]
        if not (self.repo / results).exists():
            assert (self.repo / "withheld" / f"{round_id}.sealed").exists()
            assert not (self.repo / "rounds" / round_id).exists()
            self.private[round_id] = result_numbers(yaml.safe_load((staff / f"{round_id}.yaml").read_text()))

    def public_surfaces(self) -> dict[str, str]:
        """Everything a visitor can read now: every object of the repository (each commit's files,
        the replays' refs; gzip opened), every built site, every comment and status the hub was
        sent, and every log line the commands printed."""
        out = {}
        dump = subprocess.run(
            ["git", "-C", str(self.repo), "cat-file", "--batch-all-objects", "--batch"],
            capture_output=True,
            check=True,
            timeout=120,
        ).stdout
        at = 0
        while at < len(dump):
            header_end = dump.index(b"\n", at)
            sha, kind, size = dump[at:header_end].split()
            body = dump[header_end + 1 : header_end + 1 + int(size)]
            at = header_end + 2 + int(size)
            if kind == b"blob":
                out[f"git:{sha.decode()}"] = readable(body)
        for site in self.sites:
            for path in site.rglob("*"):
                if path.is_file():
                    out[f"site:{path.relative_to(self.tmp)}"] = readable(path.read_bytes())
        for r in self.hub.requests:
            out[f"hub:{r.method} {r.path}"] = json.dumps(r.body)
        out["hub:statuses"] = json.dumps(self.hub.statuses)
        out["hub:comments"] = json.dumps(self.hub.comments)
        out["logs"] = self.logs.getvalue()
        return out

    def assert_private(self, round_ids: list[str], public: list[str]) -> None:
        """No number of a private result of `round_ids` on any public surface (numbers that a
        public round of `public` also has are not told apart, and are left out)."""
        seen = (
            set().union(
                *(every_float(yaml.safe_load((self.repo / "rounds" / f"{r}.yaml").read_text())) for r in public)
            )
            if public
            else set()
        )
        surfaces = self.public_surfaces()
        looked = [r for r in round_ids if number_patterns(self.private[r] - seen, long=False)]
        # A tiny round's numbers may all be common fractions (0.5, 0.25), which tell nothing;
        # the scan is empty only if every round is so.
        assert looked, f"{round_ids}: no number to look for"
        for round_id in looked:
            numbers = self.private[round_id] - seen
            long, short = number_patterns(numbers, long=True), number_patterns(numbers, long=False)
            # A number in 4 decimals or in full is the round's; in 3 decimals one may match a
            # page's own statistic (a median) by chance, so 3 of them together are the sign.
            enough = min(3, len(short))
            for where, text in surfaces.items():
                for pattern in long:
                    found = pattern.search(text)
                    assert found is None, (
                        f"{round_id}'s {found.group()} is public in {where}: "
                        f"{text[max(0, found.start() - 200) : found.end() + 200]}"
                    )
                hits = [m.group() for m in (p.search(text) for p in short) if m]
                assert len(hits) < enough, f"{round_id}'s {hits} are public in {where}"


class Tee(io.TextIOBase):
    """A stream that writes to two."""

    def __init__(self, first, second) -> None:
        self.first, self.second = first, second

    def write(self, text: str) -> int:
        self.second.write(text)
        return self.first.write(text)

    def flush(self) -> None:
        self.first.flush()


def readable(blob: bytes) -> str:
    """A file's text as a reader sees it: gzip opened (a games file is gzip)."""
    import gzip
    import zlib

    if blob[:2] == b"\x1f\x8b":
        try:
            blob = gzip.decompress(blob)
        except (OSError, EOFError, zlib.error):
            pass
    return blob.decode("utf-8", errors="replace")


def result_numbers(data: dict) -> set[float]:
    """The numbers of a round's results that are its entrants' measurements: each SAE,
    standing and its interval, Elo, and the win and draw rate at each checkpoint."""
    out = set()
    for agent in data["agents"]:
        out.add(agent["sae"]["value"])
        if agent.get("standing"):
            out |= {agent["standing"]["value"], *agent["standing"]["interval"]}
        out.add(agent.get("elo"))
        for point in agent["curve"]:
            out |= {point["win_rate"], point["draw_rate"]}
    return {v for v in out if isinstance(v, float)}


def every_float(node) -> set[float]:
    """Every number with a fraction anywhere in a document (a public round's: any may repeat one
    of a private round by chance, and tells nothing of it then)."""
    if isinstance(node, float):
        return {node}
    if isinstance(node, dict):
        node = list(node.values())
    if isinstance(node, list):
        return set().union(*map(every_float, node)) if node else set()
    return set()


def number_patterns(numbers: set[float], long: bool) -> list:
    """Regular expressions for each number as a page, a comment or a YAML file would print it
    (3 and 4 decimals, and in full), for the numbers that say something: a multiple of 1/40 or
    1/16 (0.5, 0.8, 0.0625...) appears on pages for other reasons and tells nothing."""
    import re

    texts = set()
    for v in numbers:
        if abs(v * 40 - round(v * 40)) < 1e-9 or abs(v * 16 - round(v * 16)) < 1e-9:
            continue
        texts |= {f"{v:.4f}", repr(v)} - {f"{v:.3f}"} if long else {f"{v:.3f}"}
    return [re.compile(r"(?<![\d.])" + re.escape(t) + r"(?!\d)") for t in sorted(texts)]


def kit_history(tmp_path: Path, monkeypatch):
    """The kit's history.py as a student runs it (`make history`), imported from a copy of kit/."""
    import importlib
    import sys

    folder = tmp_path / "alice-kit"
    shutil.copytree(ROOT / "kit", folder, ignore=shutil.ignore_patterns("__pycache__", "version"))
    for name in ("kitenv", "history"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.syspath_prepend(str(folder))
    module = importlib.import_module("history")
    monkeypatch.setattr(module.kitenv, "start", lambda script: None)  # this interpreter already has the arena
    return module


def results_games(repo: Path, round_id: str) -> list[dict]:
    """A round's public games (its games file beside the results)."""
    import gzip

    lines = gzip.decompress((repo / "rounds" / round_id / "games.jsonl.gz").read_bytes()).splitlines()
    return [json.loads(line) for line in lines[1:]]


def standings_table(page: str) -> str:
    return page[page.index("<table") : page.index("</table>")]


def test_a_season_from_registration_to_the_published_seeds(hub, tmp_path, token, monkeypatch, capsys):
    from grader.sandbox.local import bwrap_problem

    if bwrap_problem():
        pytest.skip(bwrap_problem())
    s = Season(tmp_path, hub)
    hub.users.update({STAFF[0]: STAFF[1]} | {i: login for i, login, _ in STUDENTS + [MALLORY]})

    # -- The arena on main: the staff account, no final date yet ----------------------------------
    s.repo.mkdir()
    for rel in ("site.yaml", "kit", ".github"):
        (shutil.copytree if (ROOT / rel).is_dir() else shutil.copy)(ROOT / rel, s.repo / rel)
    shutil.copytree(ROOT / "docs", s.repo / "docs")  # links followed: the site reads the schema through one
    (s.repo / "config").mkdir()
    config = {
        "schema_version": 1,
        "final_at": None,
        "freeze_hours": 48,
        "appeal_days": 7,
        "requested_runs": {"per_window": 3, "window_days": 7},
        "review_label": LABEL,
        "final": {"status": "not_run", "round_id": None, "published_at": None, "published_by": None},
        "ended": False,
    }
    Path(s.config).write_text(yaml.safe_dump(config, sort_keys=False))
    git(s.repo, "init", "-q", "-b", "main")
    (s.repo / ".git" / "info" / "exclude").write_text("field/\n")  # the round's field: never committed
    assert (
        s.arena(
            "accounts",
            "add",
            "--id",
            str(STAFF[0]),
            "--login",
            STAFF[1],
            "--handle",
            "prof",
            "--staff",
            "--approved",
            "--registry",
            s.accounts,
        )
        == 0
    )
    s.commit("the arena", "2026-11-01T09:00:00Z")
    s.protect(monkeypatch)  # from here on, main takes changes only by the documented routes

    # -- Accounts: alice registers by pull request; staff approve ---------------------------------
    registration = yaml.safe_load(Path(s.accounts).read_text())
    registration["accounts"][STUDENTS[0][0]] = {
        "login": STUDENTS[0][1],
        "handle": "alice",
        "approved": False,
        "staff": False,
    }
    pull = hub.add_pull(1, STUDENTS[0][:2], {"accounts.yaml": yaml.safe_dump(registration).encode()})
    collected = tmp_path / "collect-1"
    assert (
        s.arena(
            "pr",
            "collect",
            "--event",
            str(pr_event(tmp_path, 1, STUDENTS[0][:2], pull.head_sha)),
            "--accounts",
            s.accounts,
            "--config",
            s.config,
            "--out",
            str(collected),
            "--api-url",
            hub.api,
            "--now",
            "2026-11-02T10:00:00Z",
        )
        == 0
    )
    decision = yaml.safe_load((collected / "decision.yaml").read_text())
    assert (decision["kind"], decision["verdict"]) == ("registration", "accepted"), decision
    assert s.arena("pr", "report", "--decision", str(collected / "decision.yaml"), "--api-url", hub.api) == 0
    assert hub.statuses[-1]["state"] == "success" and hub.statuses[-1]["sha"] == pull.head_sha
    # Merged: alice, and the other students registered the same way, unapproved.
    for gid, login, handle in STUDENTS + [MALLORY]:
        assert (
            s.arena("accounts", "add", "--id", str(gid), "--login", login, "--handle", handle, "--registry", s.accounts)
            == 0
        )
    s.commit("accounts: registrations", "2026-11-02T12:00:00Z", route="pull")
    for _, _, handle in STUDENTS:  # mallory is never approved
        assert s.arena("accounts", "approve", handle, "--registry", s.accounts) == 0
    assert "approved alice" in capsys.readouterr().out
    assert s.arena("accounts", "check", s.accounts) == 0
    s.commit("accounts: approve the students", "2026-11-02T14:00:00Z", route="pull")

    # -- Submissions: alice's pull request is smoke-tested and commented on ------------------------
    alice_key = PrivateKey.generate()  # alice's own key pair, as her kit keeps it beside the kit
    alice = agent_files("alice", owner_key=encode_key(bytes(alice_key.public_key)))
    pull = hub.add_pull(2, STUDENTS[0][:2], alice)
    collected = tmp_path / "collect-2"
    assert (
        s.arena(
            "pr",
            "collect",
            "--event",
            str(pr_event(tmp_path, 2, STUDENTS[0][:2], pull.head_sha)),
            "--accounts",
            s.accounts,
            "--config",
            s.config,
            "--out",
            str(collected),
            "--api-url",
            hub.api,
            "--now",
            "2026-11-03T10:00:00Z",
        )
        == 0
    )
    assert yaml.safe_load((collected / "decision.yaml").read_text())["verdict"] == "smoke"
    smoke = tmp_path / "smoke-2.yaml"
    with smoke.open("w") as out, redirect_stdout(out):
        assert s.arena("smoke", str(collected / "submission"), "--sandbox", "local", "--withhold-output") == 0
    assert (
        s.arena(
            "pr", "report", "--decision", str(collected / "decision.yaml"), "--smoke", str(smoke), "--api-url", hub.api
        )
        == 0
    )
    (comment,) = s.bot_comments(2)
    assert "smoke test passed" in comment, comment
    assert hub.statuses[-1]["state"] == "success" and "becomes active when merged" in hub.statuses[-1]["description"]
    # Merged, with every other student's (and mallory's, whose account is not approved).
    for _, _, handle in STUDENTS[1:] + [MALLORY]:
        s.write(agent_files(handle))
    s.write(alice)
    merged = s.commit("submissions", "2026-11-03T12:00:00Z", route="pull", author=STUDENTS[0][:2])

    # -- A requested run: alice comments /score on her merged pull request -------------------------
    pull.merged, pull.merge_commit_sha = True, merged  # the hub names the clone's merge commit
    outputs = tmp_path / "outputs.txt"
    outputs.write_text("")
    monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))
    event = comment_event(tmp_path, 2, STUDENTS[0][:2], STUDENTS[0][:2], 501, created_at="2026-11-04T10:00:00Z")
    assert (
        s.arena(
            "score",
            "request",
            "--event",
            str(event),
            "--accounts",
            s.accounts,
            "--config",
            s.config,
            "--log",
            s.log,
            "--api-url",
            hub.api,
            "--now",
            "2026-11-04T10:00:00Z",
        )
        == 0
    )
    request = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    monkeypatch.delenv("GITHUB_OUTPUT")
    assert request == {"queued": "true", "request_id": "c-501", "handle": "alice", "commit": merged}
    assert "2 of 3 requested runs left" in s.bot_comments(2)[-1], s.bot_comments(2)[-1]
    s.commit("requests: c-501", "2026-11-04T10:01:00Z", route="workflow")
    entry = tmp_path / "requested-entry"
    assert s.arena("score", "take", "--commit", merged, "--handle", "alice", "--out", str(entry)) == 0
    with (tmp_path / "smoke-501.yaml").open("w") as out, redirect_stdout(out):
        assert s.arena("smoke", str(entry / "submissions" / "alice"), "--sandbox", "local") == 0
    monkeypatch.setenv("ARENA_TIER_SEED", SEEDS["ARENA_LADDER_SEED"])
    monkeypatch.setenv("ARENA_ROUND_SEED", "season-round-seed-c-501")
    published = tmp_path / "requested-published.txt"
    with published.open("w") as out, redirect_stdout(out):
        assert (
            s.arena(
                "round",
                "--tier",
                "ladder",
                "--requested",
                "--agents",
                f"alice={entry / 'submissions' / 'alice'}",
                "--sandbox",
                "local",
                *SMALL,
                "--envs",
                "2",
                # 7 games a checkpoint: rates in 14ths, numbers a leak would be seen by
                "--games-per-checkpoint",
                "7",
                "--out",
                str(tmp_path / "requested"),
                "--private-out",
                str(tmp_path / "requested-private"),
            )
            == 0
        )
    requested_id = Path(published.read_text().strip()).stem
    # The owner's history entry, as score.yml's run job seals it (in the same step, with the same
    # tier seed, which locks her replays): the results and her agent's log.
    history = tmp_path / "history-501"
    assert (
        s.arena(
            "history",
            "seal",
            "--results",
            str(tmp_path / "requested" / f"{requested_id}.yaml"),
            "--private",
            str(tmp_path / "requested-private"),
            "--field",
            str(entry / "submissions"),
            "--request",
            "c-501",
            "--out",
            str(history),
        )
        == 0
    )
    monkeypatch.delenv("ARENA_TIER_SEED")
    monkeypatch.delenv("ARENA_ROUND_SEED")
    assert (
        s.arena(
            "score",
            "finish",
            "--request",
            "c-501",
            "--status",
            "published",
            "--round-id",
            requested_id,
            "--repository",
            "arena-org/arena",
            "--results-url",
            "https://github.com/arena-org/arena/blob/main/history/alice.yaml",
            "--history",
            str(history),
            "--accounts",
            s.accounts,
            "--config",
            s.config,
            "--log",
            s.log,
            "--api-url",
            hub.api,
            "--now",
            "2026-11-04T11:00:00Z",
        )
        == 0
    )
    s.commit(f"requests: c-501 {requested_id}", "2026-11-04T11:00:00Z", route="workflow")
    assert not (s.repo / "requests" / "rounds").exists()  # a requested run is private: no plain results
    reply = s.bot_comments(2)[-1]
    assert reply.splitlines()[1].startswith("@alice-gh: "), reply
    for expected in ("It is a private round: it is not on the site", "`make history` in your kit opens them"):
        assert expected in reply, reply
    for withheld in ("SAE 0", "win rate 0", "| games used |", "Faults:"):  # its numbers are in her history
        assert withheld not in reply, reply
    s.private[requested_id] = result_numbers(
        yaml.safe_load((tmp_path / "requested-private" / f"{requested_id}.yaml").read_text())
    )

    # -- The owner finds the requested run again -------------------------------------------------
    # Where the run is answered today: on the pull request (read here over the API, as its owner
    # reads it, with no token) and in the request log on main, which names the round.
    with urllib.request.urlopen(f"{hub.api}/repos/{OWNER}/{REPO}/issues/2/comments", timeout=30) as answer:
        thread = json.load(answer)
    found = [c["body"] for c in thread if requested_id in c["body"] and c["user"]["login"] == hub.bot[1]]
    assert found and "@alice-gh" in found[-1], thread
    log = yaml.safe_load(Path(s.log).read_text())
    (logged,) = [r for r in log["requests"] if r["id"] == "c-501"]
    assert (logged["status"], logged["handle"], logged["commit"], logged["round_id"]) == (
        "published",
        "alice",
        merged,
        requested_id,
    ), logged
    # And in her history on main, sealed to her key: her results and her agent's own log, which
    # nobody else's key opens.
    mine = parse_history((s.repo / "history" / "alice.yaml").read_bytes(), "history/alice.yaml")
    (kept,) = [e for e in mine.entries if e.round == requested_id]
    assert (kept.kind, kept.request) == ("requested", "c-501")
    opened = kept.open(alice_key)
    assert opened["results"]["round"]["id"] == requested_id and "log" in opened, sorted(opened)
    with pytest.raises(HistoryError, match="not to this key"):
        kept.open(PrivateKey.generate())
    assert requested_id.encode() in (s.repo / "history" / "alice.yaml").read_bytes()
    assert b"SAE" not in (s.repo / "history" / "alice.yaml").read_bytes()

    # -- The professor's round reaches the board without a hand edit -----------------------------
    ladder = s.round("ladder", "2026-11-20T10:00:00Z", "8", 2, monkeypatch)
    s.commit(f"round {ladder}", "2026-11-20T18:00:00Z", route="workflow")
    assert yaml.safe_load((s.repo / "site.yaml").read_text())["series"]["rounds"] == []  # nobody listed it
    site = s.site("ladder")
    board = (site / "index.html").read_text()
    assert ladder in board and requested_id not in board
    table = standings_table(board)
    for _, _, handle in STUDENTS:
        assert handle in table, handle
    assert "mallory" not in table and "prof" not in table
    rounds_page = (site / "rounds" / "index.html").read_text()
    assert requested_id not in rounds_page  # a requested run is private
    assert "<td>2026-11-20</td>" in rounds_page[rounds_page.index(f"{ladder}.html") :][:400]
    field = yaml.safe_load((tmp_path / "round-ladder" / "field" / "field.yaml").read_text())
    assert {
        "handle": "mallory",
        "reason": "account not approved: staff approve it with `arena accounts approve mallory`",
    } in field["excluded"]

    # -- Private rounds: under 8 environments, and a field under 8 ---------------------------------
    # Staff try a round on 2 environments: it is private, so round.yml seals it out of rounds/.
    short = s.round("ladder", "2026-11-21T10:00:00Z", "2", 1, monkeypatch, name="ladder-short")
    # A round on 8 environments with 3 entrants (a field under 8): private too.
    entrants = tmp_path / "round-ladder" / "field" / "entrants"
    monkeypatch.setenv("ARENA_TIER_SEED", SEEDS["ARENA_LADDER_SEED"])
    monkeypatch.setenv("ARENA_ROUND_SEED", "season-round-seed-small")
    published = tmp_path / "small-published.txt"
    with published.open("w") as out, redirect_stdout(out):
        assert (
            s.arena(
                "round",
                "--tier",
                "ladder",
                "--agents",
                *(f"{h}={entrants / h}" for h in ("alice", "bob", "carol")),
                "--sandbox",
                "local",
                *SMALL,
                "--envs",
                "8",
                "--out",
                "rounds",
                "--private-out",
                str(tmp_path / "small-private"),
            )
            == 0
        )
    monkeypatch.delenv("ARENA_TIER_SEED")
    monkeypatch.delenv("ARENA_ROUND_SEED")
    small_results = published.read_text().strip()
    small = Path(small_results).stem
    s.disclose(small_results, tmp_path / "small-private")
    s.commit("rounds: two private rounds", "2026-11-21T18:00:00Z", route="workflow")
    assert sorted(s.private) == sorted([requested_id, short, small])
    assert not list((s.repo / "rounds").glob(f"{short}*")) and not list((s.repo / "rounds").glob(f"{small}*"))
    # Staff (the arena's key) open one again; nobody else has it.
    opened = tmp_path / "opened"
    assert s.arena("disclose", "--release", short, "--withheld", str(s.repo / "withheld"), "--rounds", str(opened)) == 0
    assert yaml.safe_load((opened / f"{short}.yaml").read_text())["round"]["id"] == short
    git(s.repo, "checkout", "--", "withheld")  # the release was a look, not a publication
    site = s.site("private")
    for round_id in (short, small):
        assert round_id not in (site / "index.html").read_text() + (site / "rounds" / "index.html").read_text()
        assert not (site / "rounds" / f"{round_id}.html").exists()
    assert ladder in (site / "index.html").read_text()

    # -- Staff invalidate one result, with a reason ----------------------------------------------
    assert (
        s.arena(
            "competition",
            "--config",
            s.config,
            "--now",
            "2026-11-22T10:00:00Z",
            "invalidate",
            "--round",
            ladder,
            "--handle",
            "dave",
            "--reason",
            "shared code with another entrant",
            "--actor-id",
            str(STAFF[0]),
            "--accounts",
            s.accounts,
        )
        == 0
    )
    assert (
        s.arena(
            "competition",
            "--config",
            s.config,
            "invalidate",
            "--round",
            ladder,
            "--handle",
            "dave",
            "--reason",
            "again",
            "--actor-id",
            str(STUDENTS[0][0]),
            "--accounts",
            s.accounts,
        )
        == 1
    )  # not staff
    s.commit("competition: dave's ladder result invalidated", "2026-11-22T10:00:00Z", route="pull")
    page = (s.site("invalidated") / "rounds" / f"{ladder}.html").read_text()
    row = page[page.index('invalidated">') :][:3000]
    assert "dave" in row and "invalidated by staff: shared code with another entrant" in row, row

    assert (
        s.arena("competition", "--config", s.config, "--now", "2026-11-25T10:00:00Z", "set", "--final-at", FINAL_AT)
        == 0
    )
    assert "the field freezes at 2026-12-12T09:00:00Z" in capsys.readouterr().out
    s.commit("competition: the final's date", "2026-11-25T10:00:00Z", route="pull")
    bob = STUDENTS[1]
    late = agent_files("bob", extra={"notes.txt": b"after the freeze\n"})
    pull = hub.add_pull(3, bob[:2], late)
    collected = tmp_path / "collect-3"
    assert (
        s.arena(
            "pr",
            "collect",
            "--event",
            str(pr_event(tmp_path, 3, bob[:2], pull.head_sha)),
            "--accounts",
            s.accounts,
            "--config",
            s.config,
            "--out",
            str(collected),
            "--api-url",
            hub.api,
            "--now",
            "2026-12-13T10:00:00Z",
        )
        == 0
    )
    assert yaml.safe_load((collected / "decision.yaml").read_text())["frozen"] is True
    smoke = tmp_path / "smoke-3.yaml"  # a practice smoke test is still run
    with smoke.open("w") as out, redirect_stdout(out):
        assert s.arena("smoke", str(collected / "submission"), "--sandbox", "local", "--withhold-output") == 0
    assert (
        s.arena(
            "pr", "report", "--decision", str(collected / "decision.yaml"), "--smoke", str(smoke), "--api-url", hub.api
        )
        == 0
    )
    assert "cannot become your active one" in s.bot_comments(3)[0]
    assert hub.statuses[-1]["state"] == "failure" and "frozen" in hub.statuses[-1]["description"]
    frozen_digest = yaml.safe_load((s.repo / "submissions" / "bob" / "manifest.yaml").read_text())["digest"]
    s.write(late)  # the status is a failure: main's ruleset refuses the merge
    assert (
        s.commit(
            "bob: a change after the freeze", "2026-12-13T11:00:00Z", route="pull", author=bob[:2], status="failure"
        )
        == ""
    )
    assert yaml.safe_load((s.repo / "submissions" / "bob" / "manifest.yaml").read_text())["digest"] == frozen_digest

    # -- The final: played, pending review, published --------------------------------------------
    final = s.round("final", "2026-12-14T10:00:00Z", "8", 2, monkeypatch)
    field = yaml.safe_load((tmp_path / "round-final" / "field" / "field.yaml").read_text())
    assert next(e for e in field["entrants"] if e["handle"] == "bob")["digest"] == frozen_digest
    s.commit(f"round {final}", "2026-12-14T18:00:00Z", route="workflow")
    assert "Final standings pending review." in (s.site("pending") / "index.html").read_text()
    # The pending final is sealed out of rounds/: its numbers are nowhere public yet.
    assert final in s.private and not (s.repo / "rounds" / f"{final}.yaml").exists()
    s.assert_private([final], [ladder])
    # The final runs once: a second dispatch is refused before the field is taken, naming the pending one.
    capsys.readouterr()
    assert (
        s.arena(
            "dispatch",
            "--config",
            s.config,
            "--now",
            "2026-12-14T19:00:00Z",
            "--tier",
            "final",
            "--budget",
            "10",
            "--envs",
            "8",
            "--shards",
            "2",
        )
        == 1
    )
    refused = capsys.readouterr()
    assert f"round {final} is pending review; it is run once" in refused.out + refused.err, refused
    assert (
        s.arena(
            "competition",
            "--config",
            s.config,
            "--now",
            "2026-12-15T12:00:00Z",
            "publish-final",
            "--actor-id",
            str(STAFF[0]),
            "--accounts",
            s.accounts,
        )
        == 0
    )
    s.commit("competition: the final published", "2026-12-15T12:00:00Z", route="workflow")
    board = (s.site("final") / "index.html").read_text()
    assert final in board and ladder not in standings_table(board)
    assert "pending review" not in board

    # -- The grade export -----------------------------------------------------------------------
    grades = tmp_path / "grades.csv"
    assert (
        s.arena(
            "grades", "rounds", "--invalidations", str(s.repo / "config" / "invalidations.yaml"), "--out", str(grades)
        )
        == 0
    )
    rows = list(csv.DictReader(io.StringIO(grades.read_text())))
    assert {(r["student"], r["round"]) for r in rows} == {(h, r) for _, _, h in STUDENTS for r in (ladder, final)}
    assert [r["round"] for r in rows if r["student"] == "alice"] == [ladder, final]  # in the order played
    for row in rows:
        status = (
            "invalidated: shared code with another entrant"
            if (row["student"], row["round"]) == ("dave", ladder)
            else "ok"
        )
        assert (row["sae_b0"], row["sae_b_max"], row["field"], row["status"]) == ("5", "10", "8", status), row
        assert row["sae"] and row["standing"] and row["rank"], row

    # -- An appeal's evidence -------------------------------------------------------------------
    appeal = tmp_path / "appeal-alice.yaml"
    with appeal.open("w") as out, redirect_stdout(out):
        assert s.arena("appeal", "--round", f"rounds/{final}.yaml", "--student", "alice") == 0
    text = appeal.read_text()
    evidence = yaml.safe_load(text)
    results = yaml.safe_load((s.repo / "rounds" / f"{final}.yaml").read_text())
    record = next(a for a in results["agents"] if a["name"] == "alice")["record"]
    assert {k: evidence["totals"][k] for k in ("wins", "draws", "losses", "games")} == record
    assert [e["label"] for e in evidence["environments"]] == [e["label"] for e in results["environments"]]
    # The staff record knows each environment; the student's evidence names none of them.
    staff = yaml.safe_load((tmp_path / "round-final" / "merged" / f"{final}.yaml").read_text())
    for env in staff["environments"]:
        assert env["id"] and env["name"]
        assert env["id"] not in text and env["name"] not in text, f"the appeal names {env['name']}"

    # -- Before the end, alice's final replays are in her history, and do not open yet -------------
    kit = kit_history(tmp_path, monkeypatch)
    key_file = tmp_path / "alice-owner.key"
    key_file.write_text(encode_key(bytes(alice_key)) + "\n")
    mine = ["--from", str(s.repo), "--handle", "alice", "--key", str(key_file)]
    # Kept beside main, not on it: a ref of its own that no clone of the branches carries.
    assert not (s.repo / "history" / "alice").exists()
    assert (
        subprocess.run(
            ["git", "-C", str(s.repo), "rev-parse", "--verify", "--quiet", f"refs/replays/alice/{final}"],
            capture_output=True,
        ).returncode
        == 0
    )
    capsys.readouterr()
    assert kit.main(mine + [final, "--replays", str(tmp_path / "alice-replays")]) == 0
    assert (
        "replays of this round open when the competition has ended and the final seed is published"
        in capsys.readouterr().out
    )
    assert not (tmp_path / "alice-replays").exists()

    # -- The end: the appeal window closes, the seeds are published and checked ------------------
    end = "2026-12-23T12:00:00Z"
    monkeypatch.setenv("ARENA_LADDER_SEED", SEEDS["ARENA_LADDER_SEED"])
    monkeypatch.setenv("ARENA_FINAL_SEED", SEEDS["ARENA_FINAL_SEED"])
    assert (
        s.arena("competition", "--config", s.config, "--now", "2026-12-20T12:00:00Z", "publish-seeds", "--if-ended")
        == 0
    )
    assert not (s.repo / "seeds").exists()  # the window is still open: nothing published
    assert s.arena("competition", "--config", s.config, "--now", end, "close") == 0
    assert s.arena("competition", "--config", s.config, "--now", end, "publish-seeds", "--if-ended") == 0
    monkeypatch.delenv("ARENA_LADDER_SEED")
    monkeypatch.delenv("ARENA_FINAL_SEED")
    s.commit("competition: ended; the seeds published", end, route="workflow")
    capsys.readouterr()
    for round_id, tier in ((ladder, "ladder"), (final, "final")):
        assert s.arena("verify", f"rounds/{round_id}.yaml", "--seeds", "seeds/published.yaml") == 0
        out = capsys.readouterr()
        assert f"the tier seed commitment matches the published {tier} seed" in out.out + out.err
    # -- Nothing of a private round reached a public surface, all season long ---------------------
    s.site("end")
    s.assert_private([requested_id, short, small], [ladder, final])

    # -- After the end: alice opens her final replays with her kit's `make history` --------------------
    assert kit.main(mine + [final, "--replays", str(tmp_path / "alice-replays")]) == 0
    assert f"written into {tmp_path / 'alice-replays'}" in capsys.readouterr().out
    texts = {p.stem: p.read_text() for p in (tmp_path / "alice-replays").glob("*.txt")}
    assert sorted(texts) == [e["label"] for e in results["environments"]]
    mine_final = [g for g in results_games(s.repo, final) if "alice" in (g["black"], g["white"])]
    for env in staff["environments"]:  # no environment named: labels only, as the appeal's
        assert not any(env["id"] in t or env["name"] in t for t in texts.values())
    assert sum(t.count("\n== ") for t in texts.values()) == len(mine_final)
    for withheld in ("winner", "disc", "threshold"):
        assert not any(withheld in t for t in texts.values()), withheld
    # With the published seed anyone lists the final's environments, as the round names them.
    pool = str(results["provenance"]["config"]["pool"])
    assert s.arena("envs", "--tier", "final", "--seed", SEEDS["ARENA_FINAL_SEED"], "--pool", pool) == 0
    listed = capsys.readouterr().out
    for env in staff["environments"]:
        assert env["id"] in listed and env["name"] in listed, (env["id"], env["name"], listed)
