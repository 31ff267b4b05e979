"""The fixture site in a real headless Chromium, served from 127.0.0.1.

Every page of both builds is loaded (in frames of a harness page the test server adds, so one
browser start loads many pages); the test fails on any request the server answers with an
error (a missing page, stylesheet or image), on any console message, and on a link whose
target page or anchor does not exist. Screenshots of the leaderboard and a round page are
saved in tests/site/artefacts/ (git-ignored). Chromium is Debian's `chromium`, installed by
scripts/system-deps.sh; without it the test skips and says why.
"""

from __future__ import annotations

import functools
import html.parser
import http.server
import re
import shutil
import subprocess
import threading
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

# A hang guard, not a timing: a loaded machine renders the fixture sites' pages in minutes.
pytestmark = pytest.mark.timeout(900)
ARTEFACTS = Path(__file__).resolve().parent / "artefacts"
REPO = Path(__file__).resolve().parents[2]
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
]
BATCH = 20


def chromium() -> str:
    found = shutil.which("chromium")
    if not found and (REPO / "scripts" / "system-deps.sh").exists():
        subprocess.run(["sh", str(REPO / "scripts" / "system-deps.sh")], timeout=600, check=False)
        found = shutil.which("chromium")
    if not found:
        pytest.skip(
            "chromium is not installed and scripts/system-deps.sh could not install it (needs root and apt-get)"
        )
    return found


class Recorder(http.server.SimpleHTTPRequestHandler):
    """Serves the site, records every request's status, and serves the harness pages."""

    log: list[tuple[str, int]]
    harness: dict[str, str]

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        path = urlparse(self.path).path
        if path in self.harness:
            body = self.harness[path].encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.log.append((path, 200))
            return
        super().do_GET()

    def send_response(self, code: int, message: str | None = None) -> None:
        if urlparse(self.path).path not in self.harness:
            self.log.append((urlparse(self.path).path, code))
        super().send_response(code, message)

    def log_message(self, format: str, *args) -> None:  # keep the test output clean
        pass


class Links(html.parser.HTMLParser):
    """The references and the ids of one page."""

    def __init__(self):
        super().__init__()
        self.refs: list[tuple[str, str]] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        for key in ("href", "src"):
            if a.get(key) is not None:
                self.refs.append((tag, a[key]))


def pages_of(site: Path) -> list[str]:
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))


def check_links(site: Path) -> list[str]:
    """Every reference that points at nothing: a missing file, a missing anchor, or the internet."""
    parsed = {}
    for rel in pages_of(site):
        p = Links()
        p.feed((site / rel).read_text(encoding="utf-8"))
        parsed[rel] = p
    problems = []
    for rel, page in parsed.items():
        base = f"http://site/{rel}"
        for tag, ref in page.refs:
            if ref.startswith("data:"):
                continue
            url = urlparse(urljoin(base, ref))
            if url.netloc != "site":
                problems.append(f"{rel}: <{tag}> refers outside the site: {ref}")
                continue
            target = unquote(url.path).lstrip("/")
            if not (site / target).is_file():
                problems.append(f"{rel}: <{tag}> {ref}: no such file {target}")
                continue
            if url.fragment and target.endswith(".html"):
                ids = parsed[target].ids if target in parsed else set()
                if url.fragment not in ids:
                    problems.append(f"{rel}: {ref}: no element with id {url.fragment!r} in {target}")
    return problems


def serve(site: Path, harness: dict[str, str]):
    log: list[tuple[str, int]] = []
    handler = type("H", (Recorder,), {"log": log, "harness": harness})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, log


def run_chromium(binary: str, profile: Path, args: list[str], timeout: int = 120) -> str:
    done = subprocess.run(
        [binary, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True, timeout=timeout
    )
    return done.stderr


def console_messages(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


@pytest.mark.parametrize("state", ["running", "ended"])
def test_every_page_loads_cleanly_in_chromium(state, site_running, site_ended, tmp_path):
    binary = chromium()
    site = site_running if state == "running" else site_ended
    assert check_links(site) == []
    pages = pages_of(site)
    harness = {}
    for k in range(0, len(pages), BATCH):
        frames = "".join(f'<iframe src="/{p}" width="1000" height="600"></iframe>' for p in pages[k : k + BATCH])
        harness[f"/__harness__/{k // BATCH}.html"] = (
            f'<!DOCTYPE html><html><head><link rel="icon" href="data:,">'
            f"<title>harness</title></head><body>{frames}</body></html>"
        )
    server, log = serve(site, harness)
    try:
        port = server.server_address[1]
        messages = []
        for path in harness:
            stderr = run_chromium(
                binary,
                tmp_path / "profile",
                ["--virtual-time-budget=20000", "--dump-dom", f"http://127.0.0.1:{port}{path}"],
            )
            messages += console_messages(stderr)
        if state == "ended":
            ARTEFACTS.mkdir(exist_ok=True)
            ladder = next(
                p for p in pages if re.match(r"rounds/ladder-.*\.html", p) and "Round 1" in (site / p).read_text()
            )
            for name, page, height in (("leaderboard", "index.html", 1400), ("round", ladder, 3400)):
                shot = ARTEFACTS / f"{name}.png"
                shot.unlink(missing_ok=True)
                run_chromium(
                    binary,
                    tmp_path / "profile",
                    [f"--window-size=1280,{height}", f"--screenshot={shot}", f"http://127.0.0.1:{port}/{page}"],
                )
                assert shot.exists() and shot.stat().st_size > 10_000, f"no screenshot of {page}"
    finally:
        server.shutdown()
    failed = [f"{path}: HTTP {code}" for path, code in log if code >= 400]
    requested = {path.lstrip("/") for path, code in log if code == 200}
    assert failed == []
    assert messages == []
    assert [p for p in pages if p not in requested] == []
    assert "style.css" in requested


MEASURE = """
const f = document.getElementById('f');
f.addEventListener('load', () => {
  const d = f.contentDocument, w = f.contentWindow;
  const seen = el => { const r = el.getBoundingClientRect(), s = w.getComputedStyle(el);
                       return s.display !== 'none' && s.visibility !== 'hidden' && r.width > 0 && r.left >= -1
                              && r.right <= w.innerWidth + 1; };
  const text = el => el.innerText.replace(/\\s+/g, ' ').trim();
  const rows = [...d.querySelectorAll('table.standings tbody tr')].map(
    tr => [...tr.cells].filter(seen).map(text).join(' | '));
  const heads = [...d.querySelectorAll('table.standings thead th')].filter(seen).map(text);
  const widths = [...d.querySelectorAll('table.standings tbody tr')].map(tr => [...tr.cells].filter(seen).length);
  const links = [...d.querySelectorAll('header.site nav a')];
  const ticks = [...d.querySelectorAll('svg.curves text.tick')].map(t => t.getBoundingClientRect().height);
  const out = {rows, heads, widths, navLines: new Set(links.map(a => Math.round(a.getBoundingClientRect().top))).size,
               navCount: links.length, tickPx: ticks.length ? Math.min(...ticks) : null,
               pageWidth: d.documentElement.scrollWidth, frameWidth: w.innerWidth};
  document.getElementById('out').textContent = JSON.stringify(out);
});"""


def measure(site: Path, page: str, width: int, tmp_path: Path) -> dict:
    """What a reader sees of `page` in a window `width` px wide: each standings row's visible
    cells as text, how many lines the navigation takes, the curves' smallest tick label."""
    import json

    harness = (
        f'<!DOCTYPE html><html><head><link rel="icon" href="data:,"><title>probe</title></head><body>'
        f'<iframe id="f" src="/{page}" width="{width}" height="900" style="border:0"></iframe>'
        f'<pre id="out">not measured</pre><script>{MEASURE}</script></body></html>'
    )
    server, _ = serve(site, {"/__measure__.html": harness})
    try:
        dom = subprocess.run(
            [
                chromium(),
                *FLAGS,
                f"--user-data-dir={tmp_path / 'profile'}",
                "--virtual-time-budget=20000",
                "--dump-dom",
                f"http://127.0.0.1:{server.server_address[1]}/__measure__.html",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout
    finally:
        server.shutdown()
    found = re.search(r'<pre id="out">(.*?)</pre>', dom, re.S)
    assert found and found.group(1) != "not measured", dom[-2000:]
    import html as html_mod

    return json.loads(html_mod.unescape(found.group(1)))


@pytest.mark.parametrize("width", [1280, 390])
def test_the_board_reads_at_a_laptops_and_a_phones_width(site_ended, tmp_path, width):
    seen = measure(site_ended, "index.html", width, tmp_path)
    assert seen["pageWidth"] <= seen["frameWidth"] + 1, seen  # nothing pushed off to the side
    erin = next(r for r in seen["rows"] if "erin" in r)
    if width == 1280:
        assert seen["navCount"] == 7 and seen["navLines"] == 1, seen  # one line of short items
        assert "✕" in erin and "agent_error 8" in erin, erin
    else:
        # The interval, W-D-L with the games lost by fault, and the fault are on screen, in words.
        assert re.search(r"0\.000 \(0\.000–0\.\d{3}\)", erin), erin
        assert "lost by fault" in erin and "faults: agent_error 8" in erin, erin
        minimax = next(r for r in seen["rows"] if "minimax" in r)
        assert "W–D–L" in minimax and "no faults" in minimax, minimax
    # Every heading shown heads a column that is shown: no heading over an empty column.
    assert set(seen["widths"]) == {len(seen["heads"])}, seen
    for row in seen["rows"]:  # each entrant's standing, interval and SAE, at either width
        assert re.search(r"\d\.\d{3}.*\d\.\d{3}–\d\.\d{3}", row), row
        if width == 390:
            assert re.search(r"SAE (\d\.\d{3}|none)", row), row


@pytest.mark.parametrize("width", [1280, 390])
def test_the_curves_labels_are_readable(site_ended, tmp_path, width):
    ladder = next(p for p in sorted((site_ended / "rounds").glob("ladder-*.html")) if "Round 1" in p.read_text())
    seen = measure(site_ended, f"rounds/{ladder.name}", width, tmp_path)
    assert seen["tickPx"] is not None and seen["tickPx"] >= 9, seen  # 6 px before: unreadable on a phone
