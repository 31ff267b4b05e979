"""The doors of the results document and YAML, read from the imports."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def imports(path: Path) -> set[str]:
    """Every module a file imports (absolute names; relative imports as written, with dots)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            names |= {base} | {f"{base}.{a.name}" for a in node.names}
    return names


def test_results_do_not_import_the_rounds_records():
    assert not {n for n in imports(ROOT / "grader" / "rounds" / "results.py") if n.startswith("grader.rounds")}


def test_the_engine_parses_no_yaml():
    for path in sorted((ROOT / "engine").rglob("*.py")):
        assert not {n for n in imports(path) if n == "yaml" or n.startswith("yaml.")}, path.name


def test_only_grader_documents_loads_yaml():
    """One loader: no other module of the arena builds a YAML loader of its own."""
    for path in sorted((ROOT / "grader").rglob("*.py")):
        if path.name == "yaml_io.py":
            continue
        text = path.read_text(encoding="utf-8")
        for word in ("safe_load", "SafeLoader", "yaml.load("):
            assert word not in text, f"{path.relative_to(ROOT)} uses {word}"


def test_the_site_reads_no_source_file_to_key_its_cache():
    for path in sorted((ROOT / "grader" / "site").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "find_spec" not in text and "tiers.py" not in text, path.name
