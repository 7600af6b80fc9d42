"""The project's import graph: no circles (imports inside functions included) and no import up the layers.

Layers, lowest first: docmind's infrastructure (LLM, embedder, reranker, indexes, tokens, telemetry…),
config_admin, then kb and memory side by side (neither imports the other), then chat, apikeys and sso
(sign-in) side by side, then evals (evaluation runs ask through chat), then project (settings, URLs,
ASGI routing, start-up, admin, the API's error handler, management commands, health, the metrics view and
its collectors, the MCP server), which may import every app. A module may import its own layer and the ones
below it.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("project", "docmind", "config_admin", "kb", "memory", "chat", "apikeys", "curation", "review", "audit",
            "evals", "sso")
# curation (curated answers) reads kb and is read by chat; review, audit and evals read chat (answers, feedback,
# the pipeline an evaluation asks through), and review may add a question to an evaluation set.
LAYER = {"docmind": 0, "config_admin": 1, "kb": 2, "memory": 2, "curation": 2.5, "chat": 3, "apikeys": 3,
         "sso": 3, "review": 3.5, "audit": 3.5, "evals": 3.5, "project": 4}


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    type_only: bool


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))
            if "migrations" not in p.parts}


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    nodes: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            nodes.update(id(n) for n in ast.walk(node))
    return nodes


def _imports(modules: dict[str, Path]) -> list[Import]:
    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    found: list[Import] = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        type_only = _type_checking_nodes(tree)
        for node in ast.walk(tree):  # every import statement, the ones inside functions included
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                # `from package import module` depends on the module, not on the package's own code.
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            else:
                continue
            for target in {resolve(t) for t in targets} - {None, name}:
                found.append(Import(name, target, node.lineno, id(node) in type_only))  # type: ignore[arg-type]
    return found


def _layer(module: str) -> str:
    return module.split(".")[0]


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


@pytest.fixture(scope="module")
def imports() -> list[Import]:
    return _imports(_modules())


def test_the_walker_sees_imports_inside_functions(imports):
    # project.startup imports the ingestion worker inside a function, so that edge must be in the graph.
    assert any(i.source == "project.startup" and i.target.startswith("kb.") for i in imports)


def test_the_cycle_finder_reports_a_circle_through_three_modules():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_itself_back_through_others(imports):
    edges: dict[str, set[str]] = {}
    for i in imports:
        if not i.type_only:  # imports only a type checker runs cannot form a circle at run time
            edges.setdefault(i.source, set()).add(i.target)
    assert _cycles(edges) == []


def test_no_module_imports_a_layer_above_its_own(imports):
    upward = [f"{i.source}:{i.line} → {i.target}" for i in imports
              if LAYER[_layer(i.target)] > LAYER[_layer(i.source)]
              or {_layer(i.source), _layer(i.target)} == {"kb", "memory"}]
    assert upward == []
