"""The layers, enforced: every module's imports, read with `ast`, against the layers of docs/architecture.md
and the README's table. A door that must not open fails here, naming the file and line.

- engine/ imports the standard library, numpy and numba (with its llvmlite), nothing of ours.
- examples/, the in-sandbox runner (grader/sandboxed/) and the control agent run inside the
  sandbox: the standard library and numpy only (and the runner its own sibling files).
- kit/ uses only what the kit ships: the standard library, numpy and the arena's wheel
  (engine, grader); kit/kitenv.py runs before that wheel is installed, so at module level it
  imports the standard library alone, and kit/agent.py runs in the sandbox (numpy only).
- grader/ imports downward only, through the layers below.
"""

from __future__ import annotations

import ast
import functools
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STDLIB = frozenset(sys.stdlib_module_names)
NUMERIC = frozenset({"numpy", "numba", "llvmlite"})  # llvmlite is numba's own, used by its intrinsics

# The grader's layers, lowest first: one package each (docs/architecture.md; the README's
# "where things are"). A module may import its own package and those below; `grader` itself
# (the package: its version) is the floor. The code that runs inside the sandbox
# (grader/sandboxed/) stands apart: it imports nothing of ours, and any layer may import it.
GRADER_LAYERS = (
    ("sandboxed", ("grader.sandboxed",)),
    ("common", ("grader", "grader.common")),
    ("documents", ("grader.documents",)),
    ("season", ("grader.season",)),
    ("history", ("grader.history",)),
    ("sandbox", ("grader.sandbox",)),
    ("play", ("grader.play",)),
    ("rounds", ("grader.rounds",)),
    ("verification", ("grader.verification",)),
    ("kit", ("grader.kit",)),
    ("site", ("grader.site",)),
    ("github", ("grader.github",)),
    ("cli", ("grader.cli",)),
)
# Agents' code run inside the sandbox, outside examples/.
SANDBOXED = ("grader.sandboxed",)


@dataclass(frozen=True)
class Edge:
    module: str
    imported: str
    path: str
    line: int
    top_level: bool

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.module} imports {self.imported}"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def is_module(name: str) -> bool:
    base = ROOT.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


@functools.cache
def edges_of(path: Path) -> list[Edge]:
    """Every import in one file, resolved to absolute module names (a `from X import Y` of a
    submodule Y names X.Y)."""
    module = module_name(path)
    rel = str(path.relative_to(ROOT))
    tree = ast.parse(path.read_text(encoding="utf-8"), rel)
    top = {id(node) for node in tree.body}
    top |= {id(n) for node in tree.body if isinstance(node, (ast.If, ast.Try)) for n in ast.walk(node)}
    out = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                package = package[: len(package) - node.level + 1]
                base = ".".join(package + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base == "__future__":
                continue
            subs = [f"{base}.{a.name}" for a in node.names if is_module(f"{base}.{a.name}")]
            names = subs if len(subs) == len(node.names) else [base, *subs]
        out += [Edge(module, name, rel, node.lineno, id(node) in top) for name in names]
    return out


def edges(*folders: str) -> list[Edge]:
    return [e for folder in folders for p in sorted(ROOT.joinpath(folder).rglob("*.py")) for e in edges_of(p)]


def top(name: str) -> str:
    return name.split(".")[0]


def under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def layer_of(name: str) -> int | None:
    best = None
    for index, (_, prefixes) in enumerate(GRADER_LAYERS):
        for prefix in prefixes:
            if under(name, prefix) and (best is None or len(prefix) > len(best[1])):
                best = (index, prefix)
    return None if best is None else best[0]


def sibling(edge: Edge) -> bool:
    """A script's import of a file beside it (the runner and the kit run from their folder)."""
    return (ROOT / edge.path).parent.joinpath(
        edge.imported.split(".")[0] + ".py"
    ).is_file() and "." not in edge.imported


def engine_doors(allow_yaml: bool) -> list[Edge]:
    return [
        e
        for e in edges("engine")
        if top(e.imported) not in STDLIB | NUMERIC
        and top(e.imported) != "engine"
        and not (allow_yaml and top(e.imported) == "yaml")
    ]


def grader_upward(allowed: tuple[tuple[str, str], ...]) -> list[Edge]:
    bad = []
    for e in edges("grader"):
        here, there = layer_of(e.module), layer_of(e.imported)
        if top(e.imported) != "grader" or any(under(e.module, a) and under(e.imported, b) for a, b in allowed):
            continue
        assert here is not None, f"{e.module} is in no layer of GRADER_LAYERS: place it"
        if there is not None and there > here:
            bad.append(e)
    return bad


def test_every_grader_module_has_a_layer():
    packages = [prefix for _, prefixes in GRADER_LAYERS for prefix in prefixes if prefix != "grader"]
    missing = [
        name
        for name in map(module_name, sorted((ROOT / "grader").rglob("*.py")))
        if name != "grader" and not any(under(name, prefix) for prefix in packages)
    ]
    assert not missing, f"modules in no layer of GRADER_LAYERS: {missing}"


def test_the_engine_imports_nothing_of_ours_and_no_other_library():
    bad = engine_doors(allow_yaml=True)
    assert not bad, "the engine imports only the standard library, numpy and numba:\n" + "\n".join(map(str, bad))


def test_the_engine_reads_no_yaml():
    bad = [e for e in engine_doors(allow_yaml=False) if top(e.imported) == "yaml"]
    assert not bad, "the engine imports yaml:\n" + "\n".join(map(str, bad))


def test_sandboxed_code_imports_only_the_standard_library_and_numpy():
    candidates = edges("examples") + [e for e in edges("grader") if any(under(e.module, s) for s in SANDBOXED)]
    candidates += [e for e in edges("kit") if e.module == "kit.agent"]
    bad = [e for e in candidates if top(e.imported) not in STDLIB | {"numpy"} and not sibling(e)]
    assert not bad, "code run inside the sandbox imports only the standard library and numpy:\n" + "\n".join(
        map(str, bad)
    )


def test_the_kit_uses_only_what_the_kit_ships():
    kit = edges("kit")
    bad = [e for e in kit if top(e.imported) not in STDLIB | {"numpy", "engine", "grader"} and not sibling(e)]
    bad += [e for e in kit if e.module == "kit.kitenv" and e.top_level and top(e.imported) not in STDLIB]
    assert not bad, (
        "the kit imports only the standard library, numpy, the arena's wheel and its own files "
        "(kitenv.py: the standard library, at module level):\n" + "\n".join(map(str, bad))
    )


def test_nothing_ships_imports_the_tests_or_the_benchmarks():
    bad = [e for e in edges("engine", "grader", "kit", "examples") if top(e.imported) in ("tests", "benchmarks")]
    assert not bad, "\n".join(map(str, bad))


def test_the_grader_imports_downward_only():
    bad = grader_upward(allowed=())
    layers = ", ".join(f"{i} {name}" for i, (name, _) in enumerate(GRADER_LAYERS))
    assert not bad, f"an import runs upward (layers: {layers}):\n" + "\n".join(map(str, bad))


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def module_graph(extra: tuple[Edge, ...] = ()) -> dict[str, set[str]]:
    """grader's modules and the grader modules each imports, at module level or inside a function
    (a deferred import hides a cycle from Python, not from the design)."""
    graph: dict[str, set[str]] = {}
    for e in [*edges("grader"), *extra]:
        if top(e.imported) == "grader" and e.imported != e.module and is_module(e.imported):
            graph.setdefault(e.module, set()).add(e.imported)
    return graph


def test_no_import_cycles_even_inside_a_layer():
    found = cycles(module_graph())
    assert not found, "modules that import each other, directly or through others:\n" + "\n".join(
        " -> ".join(c) for c in found
    )


def test_the_checks_see_a_door_open():
    """The walker is not blind: a planted upward import and an engine import of grader are caught."""
    planted = Edge("grader.common.limits", "grader.site.render", "grader/common/limits.py", 1, True)
    assert layer_of(planted.imported) > layer_of(planted.module)
    assert [e for e in edges_of(ROOT / "grader" / "rounds" / "play.py") if under(e.imported, "grader.play.session")]
    assert any(top(e.imported) == "numba" for e in edges_of(ROOT / "engine" / "bitboard.py"))
    back = Edge("grader.rounds.plan", "grader.rounds.play", "grader/rounds/plan.py", 1, False)
    assert any("grader.rounds.plan" in c for c in cycles(module_graph((back,)))), "a planted cycle is missed"
