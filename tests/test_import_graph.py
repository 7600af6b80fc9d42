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
"""
from __future__ import annotations

import ast
import graphlib
import tomllib
from pathlib import Path

import grimp
from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent
IMPORTLINTER = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
PACKAGES: list[str] = IMPORTLINTER["root_packages"]


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

