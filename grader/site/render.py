"""The site's one Jinja environment and the writer that renders only what changed.

Every page declares the inputs it is made from (file digests, settings); its cache key is the
digest of those and of the site-wide inputs (templates, settings, the site's own code). A page
whose key is unchanged is not rendered again: its HTML from the last build is reused.

The footer names the data commit on every page, and that commit changes with every push, so
pages are rendered with a placeholder where the commit goes and the commit is put in when the
file is written: a new commit rewrites every file but renders only the pages whose inputs moved.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from grader.common.schedule import CANONICAL_BUDGET
from grader.common.visible import visible

# Stands where the data commit goes until the page is written (never a valid commit).
COMMIT_PLACEHOLDER = "@@ARENA-DATA-COMMIT@@"
_PLACEHOLDER_BYTES = COMMIT_PLACEHOLDER.encode("utf-8")
MANIFEST = ".arena-site"
MANIFEST_HEAD = "arena site build: files of the last build (a folder with this file may be rebuilt)"


def fmt_rate(value: Any, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def fmt_code(text: str) -> Markup:
    """Plain text with `backticked` spans as <code>, escaped (the kit's steps are written so)."""
    parts = str(escape(text)).split("`")
    return Markup("".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts)))


# What `getattr` finds on a plain dict: its methods, the same for every dict (a dict instance
# has no attributes of its own).
_DICT_ATTRIBUTES = frozenset(dir(dict))


class SiteEnvironment(jinja2.Environment):
    """Jinja's environment, with `x.key` on a plain dict looked up as Jinja does, faster.

    Jinja tries the attribute first and the key after, so every `row.record.wins` on a round's
    dicts (hundreds of thousands in a build) raised and caught an AttributeError first. On a
    plain dict the attribute exists exactly when the name is one of dict's own, so any other
    name goes to the key at once: the same value, or the same undefined, as Jinja's order."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)


def shown(value: Any) -> Any:
    """What a template prints, its control and format characters made visible (grader/common/visible.py):
    a handle or an agent's text on a page is read, never obeyed."""
    if isinstance(value, Markup):
        return Markup(visible(str(value), keep_lines=True))
    if isinstance(value, str):
        return visible(value, keep_lines=True)
    return value


def make_environment(templates: Path) -> jinja2.Environment:
    """The Jinja environment: autoescaped HTML, StrictUndefined, the site's filters, and every
    printed value's hidden characters shown (`shown`)."""
    env = SiteEnvironment(
        loader=jinja2.FileSystemLoader(str(templates)),
        autoescape=jinja2.select_autoescape(["html"], default_for_string=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=shown,
    )
    env.filters["rate"] = fmt_rate
    env.filters["code"] = fmt_code
    env.globals["canonical_budget"] = CANONICAL_BUDGET  # a round below it is marked on every page
    return env


def digest(*parts: Any) -> str:
    """A stable digest of JSON-able parts (a page's cache key)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def tree_digest(folder: Path, pattern: str = "*") -> str:
    """Digest of every file's name and bytes under `folder` (templates, the site's code)."""
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob(pattern) if p.is_file() and "__pycache__" not in p.parts):
        h.update(str(path.relative_to(folder)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


@dataclass
class Writer:
    """Renders pages into `out`, reusing unchanged ones from `cache` (None: render everything)."""

    out: Path
    env: jinja2.Environment
    site_key: str
    commit: str
    common: dict
    cache: Path | None = None
    rendered: int = 0
    reused: int = 0
    written: int = 0
    files: set[str] = field(default_factory=set)
    _index: dict = field(default_factory=dict)
    _new_index: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.cache is not None:
            try:
                self._index = marshal.loads((self.cache / "pages.index").read_bytes())
            except (OSError, ValueError, EOFError):
                self._index = {}

    def page(self, rel: str, template: str, inputs: Any, context: Callable[[], dict]) -> None:
        """Render `template` to `rel` unless its inputs are those of the last build.
        `context` is called only when the page is rendered."""
        key = digest(self.site_key, template, inputs)
        self.files.add(rel)
        target = self.out / rel
        old = self._index.get(rel)
        stored = None if self.cache is None else self.cache / "pages" / (digest(rel)[:24] + ".html")
        if old and old[0] == key and stored is not None and stored.exists():
            self.reused += 1
            if old[1] == self.commit and target.exists():
                self._new_index[rel] = old
                return
            html = stored.read_bytes()
        else:
            depth = rel.count("/")
            ctx = dict(self.common)
            ctx.update(context())
            ctx["root"] = "../" * depth
            ctx["page_path"] = rel
            # Encoded once, for the cache and the page both: a round page is most of a megabyte.
            html = self.env.get_template(template).render(ctx).encode("utf-8")
            self.rendered += 1
            if stored is not None:
                stored.parent.mkdir(parents=True, exist_ok=True)
                stored.write_bytes(html)
        self._write_bytes(target, html.replace(_PLACEHOLDER_BYTES, str(escape(self.commit)).encode("utf-8")))
        self._new_index[rel] = (key, self.commit)

    def copy(self, rel: str, source: Path, version: str) -> None:
        """Copy a data file unless the copy there is of the same `version` (its sha256)."""
        self.files.add(rel)
        target = self.out / rel
        old = self._index.get(rel)
        if old and old[0] == version and target.exists():
            self._new_index[rel] = old
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        self.written += 1
        self._new_index[rel] = (version, None)

    def text(self, rel: str, content: str) -> None:
        self.files.add(rel)
        self._write(self.out / rel, content)

    def _write(self, target: Path, content: str) -> None:
        self._write_bytes(target, content.encode("utf-8"))

    def _write_bytes(self, target: Path, content: bytes) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        self.written += 1

    def finish(self) -> list[str]:
        """Remove files of the last build that this one did not make; save the index.
        Returns the removed paths."""
        removed = []
        manifest = self.out / MANIFEST
        if manifest.exists():
            for line in manifest.read_text(encoding="utf-8").splitlines()[1:]:
                if line and line not in self.files:
                    path = self.out / line
                    if path.is_file():
                        path.unlink()
                        removed.append(line)
        for folder in sorted({p.parent for p in (self.out / r for r in removed)}, key=lambda p: -len(p.parts)):
            if folder != self.out and folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        manifest.write_text(MANIFEST_HEAD + "\n" + "\n".join(sorted(self.files)) + "\n", encoding="utf-8")
        if self.cache is not None:
            self.cache.mkdir(parents=True, exist_ok=True)
            tmp = self.cache / "pages.index.tmp"
            tmp.write_bytes(marshal.dumps(self._new_index))
            os.replace(tmp, self.cache / "pages.index")
        return removed


class OutFolderError(ValueError):
    """An output folder the site will not build into; `folder` is it."""

    def __init__(self, folder: Path, message: str):
        super().__init__(message)
        self.folder = folder


def check_out_folder(out: Path) -> None:
    """Refuse to build into a folder that holds anything but an earlier build (it would be
    emptied of what this build does not make)."""
    if out.exists() and any(out.iterdir()) and not (out / MANIFEST).exists():
        raise OutFolderError(
            out, f"{out} is not empty and was not made by `arena site build`; build into an empty or new folder"
        )
