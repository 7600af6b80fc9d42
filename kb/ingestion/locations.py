"""Where a chunk is in the original file, from the located spans the parser returned for the text it covers."""
from __future__ import annotations

import bisect

from kb.ingestion.parsers.base import Location

# A chunk of ~1,000 characters covers some 30 lines of a page; more boxes than this say nothing more.
MAX_BOXES = 60


class SpanLocator:
    """locate(start, end) → the location of text[start:end]: its first page with the boxes of its lines
    there, its sheet with the first and last row, or its slide; None when no span is known."""

    def __init__(self, spans: list[tuple[int, int, Location]]) -> None:
        self.spans = sorted(spans, key=lambda s: s[0])
        self._ends = [end for _, end, _ in self.spans]

    def locate(self, start: int, end: int) -> Location | None:
        first = bisect.bisect_right(self._ends, start)
        covered = []
        for span in self.spans[first:]:
            if span[0] >= end:
                break
            if span[1] > start:
                covered.append(span[2])
        if not covered:
            return None
        head = covered[0]
        if "page" in head:
            boxes: list = []
            for loc in covered:
                if loc.get("page") == head["page"]:
                    boxes.extend(b for b in loc.get("boxes") or [] if b not in boxes)
            return {"page": head["page"], "boxes": boxes[:MAX_BOXES]}
        if "rows" in head:
            same = [loc["rows"] for loc in covered if "rows" in loc and loc.get("sheet") == head.get("sheet")]
            return {"sheet": head.get("sheet"), "rows": [min(r[0] for r in same), max(r[1] for r in same)]}
        if "slide" in head:
            return {"slide": head["slide"]}
        return dict(head)
