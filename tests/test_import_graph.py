"""No module imports itself back through others, imports inside functions included.

The floors (project > evals, review, audit > chat, apikeys, sso > curation > kb, memory > config_admin > docmind)
are import-linter's contract in pyproject.toml, checked by `make lint`. A circle between modules is not something a
contract can state: import-linter's acyclic_siblings forbids circles between sibling packages, a stricter rule the
code does not follow (kb.ingestion and kb.services import each other through different modules, with no module
circle). So this test reads the graph import-linter reads (grimp, over the same root packages) and looks for a circle
itself. Imports only a type checker runs are left out: they cannot form a circle at run time.

Nor does a contract see names: an app that takes another's private helper (a leading underscore) leans on
something its owner may change at will. What more than one app needs is public in its owner, or infrastructure
in docmind.

Dependencies stay visible: a module imports at its top, and an import inside a function says why it cannot be
there, in a comment on its line or on the line(s) directly above it or its block of imports, starting with one of
REASON_KINDS (`# heavy: pymilvus (about 1.5 s) loads with the first Milvus client`).
"""
from __future__ import annotations

import ast
import graphlib
import io
import re
import tokenize
import tomllib
from pathlib import Path

import grimp
from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent
IMPORTLINTER = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
PACKAGES: list[str] = IMPORTLINTER["root_packages"]
# The product's code: the apps, the benchmarks and the scripts (tests are not held to the rule).
PRODUCT_CODE = [*PACKAGES, "bench", "scripts"]

# Why an import may stay inside a function:
# heavy: it loads a large library or a costly module only on the path that needs it, not at start-up;
# optional: the package may be missing (an optional pin, a system library), and the caller handles that;
# order: it must follow something the function does first (an environment variable, a reactor, a set-up);
# apps not ready: it needs Django's app registry, and its module loads before the models (AppConfig, settings,
#   a benchmark that sets Django up for its run);
# cycle: its module imports this one while it loads.
REASON_KINDS = ("heavy", "optional", "order", "apps not ready", "cycle")
_REASON = re.compile(rf"^#\s*({'|'.join(REASON_KINDS)}):\s*\S")


def _run_time_graph(packages: list[str]) -> grimp.ImportGraph:
    return grimp.build_graph(*packages, exclude_type_checking_imports=True, cache_dir=None)


def _circle(graph: grimp.ImportGraph) -> list[str]:
    """One circle of modules, the first one closing it again at the end, or [] when there is none."""
    sorter = graphlib.TopologicalSorter({m: graph.find_modules_directly_imported_by(m) for m in graph.modules})
    try:
        sorter.prepare()
    except graphlib.CycleError as exc:
        return exc.args[1]
    return []


def _private_names_taken_across(root: Path, packages: list[str]) -> list[str]:
    """`path: from module import _name` for each private name a package imports from another one."""
    found = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                    continue
                parts = node.module.split(".")
                if parts[0] == package or parts[0] not in packages:
                    continue
                private = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
                if any(p.startswith("_") and not p.startswith("__") for p in parts[1:]):
                    private = [a.name for a in node.names]
                found += [f"{path.relative_to(root)}: from {node.module} import {name}" for name in private]
    return found


def _unexplained_imports(source: str) -> list[int]:
    """Lines of the imports inside a function (or lambda) that give no reason: no comment starting with a reason
    kind on their own lines, nor on the comment lines directly above them or above the first import of their
    block (imports one after another in the same body, blank lines between them allowed)."""
    comments: dict[int, tuple[str, bool]] = {}  # line -> (comment, whether the line holds nothing else)
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = (token.string, token.line.strip().startswith("#"))
    lines = source.splitlines()

    def explained_above(line: int) -> bool:
        above = line - 1
        while above in comments and comments[above][1]:
            if _REASON.match(comments[above][0]):
                return True
            above -= 1
        return False

    def explained(node: ast.stmt) -> bool:
        own = (comments.get(line, ("", True)) for line in range(node.lineno, node.end_lineno + 1))
        return any(not alone and _REASON.match(text) for text, alone in own) or explained_above(node.lineno)

    unexplained = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            statements = getattr(node, field, None)
            if not isinstance(statements, list):
                continue
            previous, previous_ok = None, False
            for statement in statements:
                if in_function and isinstance(statement, ast.Import | ast.ImportFrom):
                    joined = previous is not None and not any(
                        line.strip() for line in lines[previous.end_lineno:statement.lineno - 1])
                    ok = explained(statement) or (joined and previous_ok)
                    if not ok:
                        unexplained.append(statement.lineno)
                    previous, previous_ok = statement, ok
                else:
                    previous = None
        for child in ast.iter_child_nodes(node):
            visit(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))

    visit(ast.parse(source), False)
    return sorted(unexplained)


def _unexplained_in(root: Path, packages: list[str]) -> list[str]:
    """`path:line: statement` for each import inside a function of these packages that gives no reason."""
    found = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            statements = source.splitlines()
            found += [f"{path.relative_to(root)}:{line}: {statements[line - 1].strip()}"
                      for line in _unexplained_imports(source)]
    return found


def _write_package(root: Path, name: str, files: dict[str, str]) -> None:
    (root / name).mkdir()
    (root / name / "__init__.py").write_text("")
    for module, source in files.items():
        (root / name / f"{module}.py").write_text(source)


def test_a_circle_through_an_import_inside_a_function_is_found(tmp_path, monkeypatch):
    _write_package(tmp_path, "circle_in_function", {
        "a": "def later():\n    from circle_in_function import b\n",
        "b": "from circle_in_function import c\n",
        "c": "import circle_in_function.a\n",
    })
    monkeypatch.syspath_prepend(tmp_path)
    circle = _circle(_run_time_graph(["circle_in_function"]))
    assert sorted(set(circle)) == ["circle_in_function.a", "circle_in_function.b", "circle_in_function.c"]


def test_an_import_only_a_type_checker_runs_closes_no_circle(tmp_path, monkeypatch):
    _write_package(tmp_path, "circle_for_types", {
        "a": "from circle_for_types import b\n",
        "b": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from circle_for_types import a\n",
    })
    monkeypatch.syspath_prepend(tmp_path)
    assert _circle(_run_time_graph(["circle_for_types"])) == []


def test_a_private_name_taken_from_another_package_is_found(tmp_path):
    _write_package(tmp_path, "owner", {"api": "def _helper():\n    pass\n", "_inner": ""})
    _write_package(tmp_path, "borrower", {
        "api": "def later():\n    from owner.api import _helper\n",
        "pages": "from owner._inner import anything\nfrom owner import api\n",
    })
    assert _private_names_taken_across(tmp_path, ["owner", "borrower"]) == [
        "borrower/api.py: from owner.api import _helper", "borrower/pages.py: from owner._inner import anything"]


def test_no_package_imports_another_ones_private_names():
    assert _private_names_taken_across(ROOT, PACKAGES) == []


def test_no_module_imports_itself_back_through_others():
    assert _circle(_run_time_graph(PACKAGES)) == []


def test_every_app_of_the_project_is_on_a_floor():
    # A package the contract does not name would be free to import anything.
    local_apps = {app for app in settings.INSTALLED_APPS if (ROOT / app / "__init__.py").exists()}
    (contract,) = [c for c in IMPORTLINTER["contracts"] if c["type"] == "layers"]
    on_floors = {name.strip() for floor in contract["layers"] for name in floor.replace(":", "|").split("|")}
    assert local_apps <= set(PACKAGES) == on_floors



def test_an_import_inside_a_function_without_a_reason_is_found():
    # The lines marked "unexplained" must be found, and only those: a comment that names no reason kind is none.
    source = """import os


def plain():
    import json  # unexplained

    from decimal import Decimal  # unexplained
    return json, Decimal


def said_on_the_line():
    import json  # heavy: stands in for a large library


def said_above_a_block():
    # optional: stands in for a package that may be missing
    import json

    from decimal import Decimal
    import csv
    return json, Decimal, csv


def said_above_only_the_second():
    import json  # unexplained
    # order: after the first
    import csv


def comments_that_give_no_reason():
    # Builds the answer.
    import json  # unexplained
    # heavy: but a blank line parts it from the import

    import csv  # unexplained
    return lambda: __import__("json")


class Holder:
    def method(self):
        if self:
            from json import dumps  # noqa: F401 - unexplained
        else:
            # apps not ready: stands in for a model
            from json import loads
"""
    marked = [number for number, line in enumerate(source.splitlines(), 1) if "unexplained" in line]
    assert len(marked) == 6
    assert _unexplained_imports(source) == marked


def test_every_import_inside_a_function_says_why_it_is_not_at_the_top():
    unexplained = _unexplained_in(ROOT, PRODUCT_CODE)
    assert unexplained == [], "imports inside functions without a reason comment (" + ", ".join(REASON_KINDS) + \
        "), or move them to the top of their module:\n" + "\n".join(unexplained)
