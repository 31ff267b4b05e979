"""The kit's `make check` shows an agent's text, never obeys it: the reason of a failure and the
end of what the agent printed reach the terminal with their control and format characters made
visible (grader/common/visible.py)."""

from __future__ import annotations

from grader.play.smoke import BoardResult, SmokeReport


def test_make_check_shows_the_agents_text(kit_scripts, capsys):
    _, _, modules = kit_scripts
    board = BoardResult(
        "8x8",
        "standard most/standard",
        "env-x",
        result="fail",
        pace_ms=6.4,
        reason="act() raised ValueError: \x1b[2J\u202egnp.exe",
    )
    report = SmokeReport(
        submission="agent",
        sandbox="none",
        result="fail",
        boards=[board],
        stderr_tail="line one\nclear\x1b[2J\x1b]0;title\x07 rlo\u202e bom\ufeff nul\x00",
    )
    modules["check"].print_report(report, 1.0)
    out = capsys.readouterr().out
    assert "act() raised ValueError: \\x1b[2J<U+202E>gnp.exe" in out
    assert "line one\nclear\\x1b[2J\\x1b]0;title\\x07 rlo<U+202E> bom<U+FEFF> nul\\x00" in out
    assert not any(c in out for c in "\x1b\x07\x00\u202e\ufeff")
