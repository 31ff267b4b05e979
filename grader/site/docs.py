"""The documents of `docs/` as pages: Markdown to HTML, links between them, the limits table.

The limits table is rendered from `grader.common.limits.DEFAULT_LIMITS.rows()` where a document has
the line `<!-- limits-table -->`, so the published limits are the enforced ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import markdown
from markupsafe import Markup, escape

from grader.common.limits import DEFAULT_LIMITS, Limits

LIMITS_MARKER = "<!-- limits-table -->"
# Reading order of the navigation; any other document follows, by name.
ORDER = ("rules", "benchmark-spec", "protocol", "results")
NAV_TITLES = {"rules": "Rules", "benchmark-spec": "Benchmark spec", "protocol": "Protocol", "results": "Results format"}
_HREF = re.compile(r'<a href="([^"]*)"([^>]*)>(.*?)</a>', re.S)
_CODE = re.compile(r"`([^`]+)`")


class DocTextError(ValueError):
    """A document of the docs folder that is not UTF-8 text; `path` is it, `offset` the first bad byte."""

    def __init__(self, path: Path, offset: int, message: str):
        super().__init__(message)
        self.path, self.offset = path, offset


@dataclass(frozen=True)
class Doc:
    """One document of docs/: its page name (`rules` -> rules.html), title and source text."""

    stem: str
    title: str
    nav: str
    text: str
    source: Path


def _inline(text: str) -> Markup:
    """Escape, then set `code` spans (the limits' wording uses them)."""
    return Markup(_CODE.sub(r"<code>\1</code>", str(escape(text))))


def limits_table(limits: Limits | None = None) -> Markup:
    """The limits table as HTML, from the grader's own configuration (DEFAULT_LIMITS unless
    given, looked up when called)."""
    limits = DEFAULT_LIMITS if limits is None else limits
    rows = "".join(
        f'<tr><th scope="row">{_inline(name)}</th><td class="num">{_inline(value)}</td><td>{_inline(meaning)}</td></tr>'
        for name, value, meaning in limits.rows()
    )
    return Markup(
        '<table class="limits"><caption>Limits, rendered from the grader\'s configuration '
        "(<code>grader/common/limits.py</code>)</caption><thead><tr><th>limit</th><th>value</th>"
        f"<th>what it means</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def find_docs(folder: Path | None) -> list[Doc]:
    """The Markdown documents of `folder`, in reading order (none if the folder is missing)."""
    if folder is None or not folder.is_dir():
        return []
    docs = []
    for path in sorted(folder.glob("*.md"), key=lambda p: (ORDER.index(p.stem) if p.stem in ORDER else 99, p.stem)):
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DocTextError(
                path, exc.start, f"{path}: not UTF-8 text (byte {exc.start} is {exc.object[exc.start]:#04x})"
            ) from None
        heading = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), path.stem)
        docs.append(Doc(path.stem, heading, NAV_TITLES.get(path.stem, heading), text, path))
    return docs


def render_doc(doc: Doc, site_files: set[str], limits: Limits | None = None) -> tuple[Markup, list[str]]:
    """(the document's HTML, warnings). Links to other documents become links to their pages;
    a relative link to something the site does not carry becomes plain text (and a warning),
    so the site never has a broken link."""
    html = markdown.markdown(doc.text, extensions=["tables", "fenced_code", "sane_lists", "toc"], output_format="html")
    warnings: list[str] = []
    if LIMITS_MARKER in html:
        html = html.replace(LIMITS_MARKER, str(limits_table(limits)))

    def link(match: re.Match) -> str:
        href, rest, text = match.groups()
        if re.match(r"^[a-z][a-z0-9+.-]*:", href) or href.startswith("#"):
            return match.group(0)
        target, _, fragment = href.partition("#")
        if target.endswith(".md"):
            target = target[:-3] + ".html"
        if target in site_files:
            return f'<a href="{target}{"#" + fragment if fragment else ""}"{rest}>{text}</a>'
        warnings.append(f"{doc.source.name}: link to {href} is not part of the site; shown as text")
        return f'<span class="offsite" title="{escape(href)} (not part of the site)">{text}</span>'

    return Markup(_HREF.sub(link, html)), warnings


def summary(doc: Doc) -> str:
    """The document's first paragraph of prose (after its title), as plain text, for the
    Documents page: at most 240 characters."""
    para: list[str] = []
    for line in doc.text.splitlines():
        text = line.strip()
        if not text:
            if para:
                break
            continue
        if text.startswith(("#", "<!--", "|", "```", "-", "*", ">")) and not para:
            continue
        para.append(text)
    plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", " ".join(para)).replace("`", "").replace("**", "")
    return plain if len(plain) <= 240 else plain[:239].rsplit(" ", 1)[0] + "…"
