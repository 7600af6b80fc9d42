"""Markdown tables from result JSON files: `python -m bench.report RESULT.json [KEY.PATH …]`.

A dict of dicts becomes one row per key and one column per leaf (nested dicts flattened as `a.b`); a list of
dicts one row per item; a dict of plain values a two-column table. KEY.PATH picks a part of the result
(`report.single_turn`, `seeds.1.formats`); several files given with one path become one row each, which is
how a before/after table is made from two runs:

    .venv/bin/python -m bench.report before.json after.json --path report.single_turn
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def pick(result: Any, path: str | None) -> Any:
    for key in (path.split(".") if path else []):
        result = result[int(key)] if isinstance(result, list) else result[key]
    return result


def flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(value, dict):
        return {prefix or "value": value}
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        out.update(flat(item, name) if isinstance(item, dict) else {name: item})
    return out


def cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list | tuple):
        return ", ".join(cell(v) for v in value)
    return "" if value is None else str(value).replace("|", "\\|").replace("\n", " ")


def table(rows: dict[str, Any]) -> str:
    """Rows named by their keys; a row that is not a dict is one value."""
    flattened = {name: flat(row) for name, row in rows.items()}
    columns = list(dict.fromkeys(c for row in flattened.values() for c in row))
    lines = ["| | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    lines += [f"| {name} | " + " | ".join(cell(row.get(c)) for c in columns) + " |" for name, row in flattened.items()]
    return "\n".join(lines)


def render(value: Any) -> str:
    if isinstance(value, list):
        return table({str(i): item for i, item in enumerate(value)})
    if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
        return table(value)
    return "\n".join(["| key | value |", "|---|---|"] + [f"| {k} | {cell(v)} |" for k, v in flat(value).items()])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--path", default=None, help="dotted path of the part to show (default: all of it)")
    args = parser.parse_args(argv)
    parts = {f.stem: pick(json.loads(f.read_text(encoding="utf-8")), args.path) for f in args.files}
    print(render(next(iter(parts.values()))) if len(parts) == 1 else table(parts))


if __name__ == "__main__":
    main()
