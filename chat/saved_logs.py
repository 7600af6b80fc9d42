"""A turn's saved log (`Message.retrieval_log`) read back under today's key names, however old the row."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Keys that logs saved before the wire became snake_case hold in camelCase, by the part of the log holding them.
_RENAMED_IN_PART: dict[str, dict[str, str]] = {
    "classification": {"timeAware": "time_aware", "memoryAware": "memory_aware", "isAmbiguous": "is_ambiguous",
                       "scopeConfidence": "scope_confidence", "memoryWriteHints": "memory_write_hints"},
    "route": {"fallbackNote": "fallback_note"},
    "grade": {"rerankTop1": "rerank_top1", "lexCoverage": "lex_coverage", "kbEntityWeak": "kb_entity_weak",
              "webCompensationNeeded": "web_compensation_needed"},
    "prompt": {"lowConfidence": "low_confidence"},
    "report": {"citationCoverage": "citation_coverage", "invalidRefs": "invalid_refs",
               "confidenceScore": "confidence_score", "confidenceBand": "confidence_band"},
}
# …and in each item of a list within a part.
_RENAMED_IN_ITEMS: dict[tuple[str, str], dict[str, str]] = {
    ("agentic", "tool_calls"): {"resultCount": "result_count", "documentIds": "document_ids",
                                "filteredAlreadyRetrieved": "filtered_already_retrieved", "durationMs": "duration_ms"},
    ("memory", "recalled"): {"fromIndex": "from_index"},
}


def with_current_names(log: Any) -> Any:
    """A copy of `log` with each old camelCase key under its snake_case name (where a row holds both, the
    snake_case value stays). What is not a log's shape is returned as it is: a reader shows what it can."""
    if not isinstance(log, Mapping):
        return log
    current = dict(log)
    for part, names in _RENAMED_IN_PART.items():
        if isinstance(current.get(part), Mapping):
            current[part] = _renamed(current[part], names)
    for (part, items), names in _RENAMED_IN_ITEMS.items():
        section = current.get(part)
        if isinstance(section, Mapping) and isinstance(section.get(items), list):
            current[part] = {**section, items: [_renamed(item, names) if isinstance(item, Mapping) else item
                                                 for item in section[items]]}
    return current


def _renamed(values: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    return {names.get(key, key): value for key, value in values.items()
            if not (key in names and names[key] in values)}
