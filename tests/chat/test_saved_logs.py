"""A saved turn log read back under today's key names: rows saved while some keys were camelCase still show."""
from __future__ import annotations

import pytest

from chat.saved_logs import with_current_names

# A log as turns saved it while classification, route, grade, prompt, report, tool calls and recalled memories
# had camelCase keys.
OLD_LOG = {
    "timings_ms": {"retrieval": 12.0},
    "classification": {"rewritten": "年假几天", "timeAware": False, "memoryAware": False, "isAmbiguous": True,
                       "scope": "KNOWLEDGE", "scopeConfidence": 0.9, "memoryWriteHints": []},
    "route": {"mode": "AGENTIC", "reason": "two sides", "fallbackNote": "no document selected"},
    "grade": {"grade": "HIGH", "rerankTop1": 0.91, "lexCoverage": 0.8, "kbEntityWeak": False,
              "webCompensationNeeded": False, "reason": "strong"},
    "prompt": {"tokens": {"total": 900}, "notes": [], "lowConfidence": True},
    "report": {"citationCoverage": 1.0, "invalidRefs": [4], "confidenceScore": 0.7, "confidenceBand": "medium",
               "ungrounded": False},
    "agentic": {"tool_calls": [{"round": 1, "id": "c1", "name": "searchDocs", "arguments": {"query": "年假"},
                                "resultCount": 3, "documentIds": [1], "filteredAlreadyRetrieved": 0, "error": "",
                                "durationMs": 4.2}],
                "used_web": False, "trace": []},
    "memory": {"recalled": [{"id": 5, "type": "preference", "score": 0.8, "fromIndex": True}], "degraded": False},
    "kb_chunks": [{"chunk_id": "7", "document_id": 1}],
}

NEW_LOG = {
    "timings_ms": {"retrieval": 12.0},
    "classification": {"rewritten": "年假几天", "time_aware": False, "memory_aware": False, "is_ambiguous": True,
                       "scope": "KNOWLEDGE", "scope_confidence": 0.9, "memory_write_hints": []},
    "route": {"mode": "AGENTIC", "reason": "two sides", "fallback_note": "no document selected"},
    "grade": {"grade": "HIGH", "rerank_top1": 0.91, "lex_coverage": 0.8, "kb_entity_weak": False,
              "web_compensation_needed": False, "reason": "strong"},
    "prompt": {"tokens": {"total": 900}, "notes": [], "low_confidence": True},
    "report": {"citation_coverage": 1.0, "invalid_refs": [4], "confidence_score": 0.7, "confidence_band": "medium",
               "ungrounded": False},
    "agentic": {"tool_calls": [{"round": 1, "id": "c1", "name": "searchDocs", "arguments": {"query": "年假"},
                                "result_count": 3, "document_ids": [1], "filtered_already_retrieved": 0,
                                "error": "", "duration_ms": 4.2}],
                "used_web": False, "trace": []},
    "memory": {"recalled": [{"id": 5, "type": "preference", "score": 0.8, "from_index": True}], "degraded": False},
    "kb_chunks": [{"chunk_id": "7", "document_id": 1}],
}


def test_an_old_log_reads_with_snake_case_keys_and_its_values_kept():
    assert with_current_names(OLD_LOG) == NEW_LOG


def test_a_log_saved_today_reads_as_it_was_saved():
    assert with_current_names(NEW_LOG) == NEW_LOG


def test_reading_an_old_log_leaves_the_stored_value_unchanged():
    before = repr(OLD_LOG)
    with_current_names(OLD_LOG)
    assert repr(OLD_LOG) == before


def test_where_a_part_holds_both_spellings_the_snake_case_value_stays():
    log = {"grade": {"grade": "LOW", "lexCoverage": 0.1, "lex_coverage": 0.2}}
    assert with_current_names(log) == {"grade": {"grade": "LOW", "lex_coverage": 0.2}}


@pytest.mark.parametrize("stored", [None, [], "text", {"route": "RULE_PLANNER", "agentic": {"tool_calls": "x"}},
                                    {"agentic": {"tool_calls": ["round 1: searchDocs"]}}])
def test_a_value_not_of_a_logs_shape_reads_as_it_is(stored):
    assert with_current_names(stored) == stored
