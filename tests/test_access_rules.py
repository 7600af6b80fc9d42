"""Access rules are decided in kb.access: other modules ask it rather than repeat a rule.

A copy would drift from the original unseen, and a path would then let through what another refuses.
"""
from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES: list[str] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"][
    "root_packages"]


def _scope_membership_tests(source: str) -> list[int]:
    """Lines that test whether something's `scope` is in a collection (`key.scope in accepted`)."""
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Compare) and isinstance(node.left, ast.Attribute) and node.left.attr == "scope"
            and any(isinstance(op, ast.In | ast.NotIn) for op in node.ops)]


def test_a_scope_membership_test_is_found():
    assert _scope_membership_tests("if key.scope not in accepted:\n    pass\nok = k.scope == 'ask'\n") == [1]


def test_whether_a_key_may_act_here_is_answered_by_key_allows_alone():
    # A widget frame is served for ask-only keys (`key.scope != ASK`): a fact about the key, not this rule.
    sources = [path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))
               if "migrations" not in path.parts]
    found = {str(path.relative_to(ROOT)): lines for path in sources
             if (lines := _scope_membership_tests(path.read_text(encoding="utf-8")))}
    assert list(found) == ["kb/access.py"], found
