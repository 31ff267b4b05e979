"""Untrusted text is shown, never obeyed (grader/common/visible.py): every control and format
character of an agent's text, a branch name, a title or a handle is made visible on every
surface a person reads: a pull request's comment and status, the terminal and the logs, the
site."""

from __future__ import annotations

import io
import unicodedata
from pathlib import Path

import pytest

from grader.common.visible import HIDDEN_CATEGORIES, visible
from grader.github.api import User
from grader.github.pr_check import Decision

# What a hostile agent prints: NUL, BEL, an ESC sequence, DEL, a C1 control (CSI), a
# right-to-left override and isolate, a BOM, a zero-width space, a line separator, a private
# use character and a lone surrogate.
HOSTILE = (
    "nul\x00 bel\x07 esc\x1b[31mred\x1b[0m del\x7f c1\x9b2J rlo\u202egnp.exe lri\u2066x\u2069 "
    "bom\ufeff zw\u200b ls\u2028 pua\ue000 sur\udc80 cr\r"
)
SHOWN = (
    "nul\\x00 bel\\x07 esc\\x1b[31mred\\x1b[0m del\\x7f c1\\x9b2J rlo<U+202E>gnp.exe lri<U+2066>x<U+2069> "
    "bom<U+FEFF> zw<U+200B> ls<U+2028> pua<U+E000> sur<U+DC80> cr\\x0d"
)


def _hidden_left(text: str) -> list[str]:
    return [f"U+{ord(c):04X}" for c in text if unicodedata.category(c) in HIDDEN_CATEGORIES and c not in "\n\t"]


def test_every_hidden_character_is_shown_as_an_escape():
    assert visible(HOSTILE) == SHOWN
    assert visible("plain text, accents é and CJK 漢字 stay") == "plain text, accents é and CJK 漢字 stay"
    assert visible("two\nlines\tand a tab") == "two\\x0alines\\x09and a tab"
    assert visible("two\nlines\tand a tab", keep_lines=True) == "two\nlines\tand a tab"
    assert visible(ValueError("bad\x1b]0;title\x07")) == "bad\\x1b]0;title\\x07"


def test_every_code_point_of_the_hidden_categories_is_escaped():
    # The first two planes whole, and the tags, private use and unassigned points above them.
    points = list(range(0x20000)) + [0x2FFFF, 0xE0001, 0xE0041, 0xE007F, 0xF0000, 0x10FFFD]
    hidden = "".join(chr(p) for p in points if unicodedata.category(chr(p)) in HIDDEN_CATEGORIES)
    assert not _hidden_left(visible(hidden))


def _decision(**kw) -> Decision:
    base = dict(
        repository="o/r",
        number=7,
        head_sha="a" * 40,
        action="opened",
        author=User(1, "student"),
        kind="submission",
        verdict="smoke",
        handle="alice",
    )
    return Decision(**(base | kw))


def test_a_pull_requests_comment_and_status_show_the_agents_text():
    from grader.github.pr_report import compose

    smoke = {
        "result": "fail",
        "reason": "refused: " + HOSTILE,
        "boards": [],
        "stderr_tail": HOSTILE,
        "interpreter": "3.11\u202e",
        "numpy": "2.0\x00",
    }
    outcome = compose(_decision(notes=["branch feature\u202e-txt.exe"]), smoke)
    for text in (outcome.body, outcome.description):
        assert not _hidden_left(text), _hidden_left(text)
    assert "rlo<U+202E>gnp.exe" in outcome.body and "\\x1b[31mred" in outcome.body
    assert "feature<U+202E>-txt.exe" in outcome.body
    refused = compose(_decision(verdict="refused", reasons=["title \x1b[2J" + HOSTILE]), None)
    assert not _hidden_left(refused.body) and not _hidden_left(refused.description)
    assert "title \\x1b[2J" in refused.description


def test_the_github_calls_send_no_hidden_character():
    from grader.github.api import Repo

    sent = {}

    class Comments:
        def create_comment(self, body):
            sent["comment"] = body
            return type("Comment", (), {"id": 1})()

    class Target:
        def create_status(self, sha, state, url, description, context):
            sent["status"] = description
            return object()

    repo = Repo.__new__(Repo)
    repo.full_name, repo._repo, repo._issues, repo._pulls = "o/r", Target(), {7: Comments()}, {}
    repo.post_comment(7, "line one\n" + HOSTILE)
    repo.set_status("a" * 40, "failure", HOSTILE, "arena")
    assert sent["comment"].startswith("line one\n") and not _hidden_left(sent["comment"])
    assert not _hidden_left(sent["status"])


def test_the_terminal_shows_the_text_of_an_error_and_of_progress(capsys):
    from grader.cli import main as cli
    from grader.rounds.workers import Progress

    class Bad(ValueError):
        pass

    def fail(_):
        raise Bad("no such entrant " + HOSTILE)

    parser = cli.build_parser
    args = type("Args", (), {"command": "x", "func": staticmethod(fail)})()
    cli.build_parser = lambda command: type("P", (), {"parse_args": lambda self, argv: args})()
    try:
        assert cli.main(["x"]) == cli.INPUT_FAILED
    finally:
        cli.build_parser = parser
    err = capsys.readouterr().err
    assert "no such entrant nul\\x00" in err and not _hidden_left(err)
    stream = io.StringIO()
    Progress("r", 1, 10, stream=stream).games("E01", 1, "pairing " + HOSTILE)
    assert "rlo<U+202E>gnp.exe" in stream.getvalue() and not _hidden_left(stream.getvalue())


def test_the_site_shows_every_printed_value(tmp_path: Path):
    from markupsafe import Markup

    from grader.site.render import make_environment

    env = make_environment(tmp_path)
    page = env.from_string("<p>{{ handle }}</p><pre>{{ tail }}</pre>{{ html }}").render(
        handle="mallory\u202egnp.exe", tail="a\nb\x1b[2J", html=Markup("<b>bold\u200b</b>")
    )
    assert page == "<p>mallory&lt;U+202E&gt;gnp.exe</p><pre>a\nb\\x1b[2J</pre><b>bold<U+200B></b>" or (
        "mallory" in page and not _hidden_left(page)
    ), page
    assert not _hidden_left(page) and "<b>bold" in page and "a\nb" in page


@pytest.mark.parametrize("text", [HOSTILE, "plain"])
def test_visible_is_idempotent_on_what_it_returns(text):
    assert visible(visible(text)) == visible(text)
