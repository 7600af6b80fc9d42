"""docs/architecture.md stays true: the paths it names exist, and its floors are import-linter's.

A path counts when it starts with one of the repository's top-level packages or folders: in backticks in the
prose (`kb/retrieval/rrf.py`, `kb/retrieval/`, or dotted, `kb.retrieval.rrf`), and as a bare token inside the
diagrams (fenced blocks), where backticks would show literally. URLs (`/api/chat/`) start with a slash and are not
paths. The floors diagram is the fenced block under the "## Floors" heading; each layer of each `layers` contract
in pyproject.toml must appear in it as the contract writes it ("chat | apikeys | sso"), in the contract's order,
so the page says which way imports point exactly as `make lint` enforces it.
"""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
IMPORTLINTER = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
# Where a path in the page may start: the packages on the floors, and the other top-level folders it may name.
TOP_LEVEL = frozenset(IMPORTLINTER["root_packages"]) | {"tests", "bench", "docs", "scripts", "eval", "templates",
                                                        "static", "locale"}
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
INLINE = re.compile(r"`([^`\n]+)`")
_TOP = "|".join(sorted(TOP_LEVEL, key=len, reverse=True))
DIAGRAM_PATH = re.compile(rf"(?<![\w/.-])((?:{_TOP})/[\w./-]*)")
# The page's sections are short; a few dozen paths are what it is for. Fewer means the patterns stopped matching.
MIN_PATHS = 40


def _blocks_and_prose(text: str) -> tuple[list[str], str]:
    return FENCE.findall(text), FENCE.sub("", text)


def _is_path(span: str) -> bool:
    if " " in span or span.startswith("/"):
        return False
    return re.split(r"[/.]", span, maxsplit=1)[0] in TOP_LEVEL and ("/" in span or "." in span)


def _exists(path: str) -> bool:
    if "/" not in path and not path.endswith(".py"):  # dotted: a module or a package
        dotted = ROOT / path.replace(".", "/")
        return dotted.with_suffix(".py").is_file() or (dotted / "__init__.py").is_file()
    if path.endswith("/"):
        return (ROOT / path).is_dir()
    return (ROOT / path).exists()


def named_paths(text: str) -> list[str]:
    """Every path the page names, in the order it names them (repeats kept)."""
    blocks, prose = _blocks_and_prose(text)
    found = [span for span in INLINE.findall(prose) if _is_path(span)]
    for block in blocks:
        found += [token.rstrip(".,;:") or token for token in DIAGRAM_PATH.findall(block)]
    return found


def floors_diagram(text: str) -> str:
    section = re.search(r"^## Floors\b(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert section, "docs/architecture.md has no '## Floors' section"
    blocks = FENCE.findall(section.group(1))
    assert blocks, "the '## Floors' section has no fenced diagram"
    return blocks[0]


def contract_layers() -> list[list[str]]:
    """The `layers` of each layers contract, top floor first."""
    return [list(c["layers"]) for c in IMPORTLINTER["contracts"] if c["type"] == "layers"]


def test_every_path_the_page_names_exists() -> None:
    paths = named_paths(DOC.read_text(encoding="utf-8"))
    assert len(paths) >= MIN_PATHS, f"only {len(paths)} paths found in docs/architecture.md: {paths}"
    missing = sorted({p for p in paths if not _exists(p)})
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"


def test_each_section_names_real_modules() -> None:
    text = DOC.read_text(encoding="utf-8")
    for heading in ("## Floors", "## A chat turn", "## An ingestion"):
        section = re.search(rf"^{heading}\b(.*?)(?=^## |\Z)", text, re.S | re.M)
        assert section, f"docs/architecture.md has no '{heading}' section"
        assert any(p.endswith(".py") for p in named_paths(section.group(1))), f"'{heading}' names no module"


def test_every_layer_of_the_contracts_is_on_the_floors_diagram() -> None:
    diagram = floors_diagram(DOC.read_text(encoding="utf-8"))
    contracts = contract_layers()
    assert contracts, "pyproject.toml has no import-linter layers contract"
    for layers in contracts:
        packages = [name.strip() for layer in layers for name in re.split(r"[:|]", layer)]
        absent = [name for name in packages if not re.search(rf"(?<![\w/]){re.escape(name)}(?![\w/])", diagram)]
        assert not absent, f"the floors diagram does not name {absent}"


def _layer_pattern(layer: str) -> re.Pattern[str]:
    """The layer as a diagram line writes it: its names and separators in the contract's order, any spacing
    around a separator, standing apart from what precedes and follows it by two spaces (the diagram's columns)."""
    parts = [re.escape(part.strip()) if part.strip() not in ":|" else rf"\s*{re.escape(part.strip())}\s*"
             for part in re.split(r"([:|])", layer)]
    return re.compile(r"(?:^|\s{2})" + "".join(parts) + r"(?=\s{2}|\s*$)")


def test_the_floors_diagram_keeps_the_contracts_order_and_relations() -> None:
    lines = floors_diagram(DOC.read_text(encoding="utf-8")).splitlines()
    for layers in contract_layers():
        at = -1
        for layer in layers:
            pattern = _layer_pattern(layer)
            below = [i for i, line in enumerate(lines) if i > at and pattern.search(line)]
            assert below, (f"the floors diagram lacks the layer '{layer}' below '{layers[layers.index(layer) - 1]}'"
                           if at >= 0 else f"the floors diagram lacks the layer '{layer}'") + (
                " (written as pyproject.toml writes it: ':' may import each other, '|' import nothing of each other)")
            at = below[0]
