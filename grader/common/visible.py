"""Untrusted text shown, never obeyed: control and format characters made visible.

An agent's text (its stderr, an exception's message), a branch name, a pull request's title,
a handle: wherever a person reads one (a pull request's comment or status, a log, the
terminal, the site, the kit's `make check`), its control and format characters would act
instead of being read. A NUL can make GitHub refuse a comment, an ESC sequence rewrites a
terminal, a right-to-left override (U+202E) makes what is read differ from what is there, a
zero-width character or a BOM hides in a name. `visible` is the one way every such surface
shows them: each as an escape a person can read, `\\x1b` for C0, DEL and C1 controls and
`<U+202E>` for the others (format characters, surrogates, private use, unassigned code
points, line and paragraph separators). Newlines (and tabs) are kept where the surface shows
lines (`keep_lines`), escaped where it shows one.
"""

from __future__ import annotations

import unicodedata

# Unicode general categories shown as escapes: controls (C0, DEL, C1), format characters
# (bidi overrides and isolates, zero-width characters, the BOM, tags), surrogates, private
# use, unassigned code points, and the line and paragraph separators.
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
LINE_CHARACTERS = frozenset("\n\t")


def escape(char: str) -> str:
    """The visible form of one hidden character: `\\xNN` below U+0100, else `<U+XXXX>`."""
    point = ord(char)
    return f"\\x{point:02x}" if point < 0x100 else f"<U+{point:04X}>"


def hidden(char: str) -> bool:
    """Whether `char` acts instead of being read (a control or format character, etc.)."""
    return unicodedata.category(char) in HIDDEN_CATEGORIES


def visible(text: object, keep_lines: bool = False) -> str:
    """`text` (str() of anything else) with every hidden character shown as an escape;
    newlines and tabs kept when `keep_lines`. Printable text comes back unchanged."""
    if not isinstance(text, str):
        text = str(text)
    if text.isprintable():  # no control, format or separator character at all: the fast path
        return text
    keep = LINE_CHARACTERS if keep_lines else frozenset()
    return "".join(escape(c) if c not in keep and hidden(c) else c for c in text)
