"""ParentExpander: child → parent text, sibling collapse, lookup failure."""
from __future__ import annotations

from kb.retrieval.parents import ParentExpander
from tests.kb.retrieval.fakes import FakeSearcher, chunk, unit, web_chunk


def _searcher() -> FakeSearcher:
    s = FakeSearcher()
    s.add("c1", "child one", unit(1, 0, 0), parent=(10, "parent ten: child one. child two."))
    s.add("c2", "child two", unit(0, 1, 0), parent=(10, "parent ten: child one. child two."))
    s.add("c3", "orphan", unit(0, 0, 1))
    return s


def test_a_child_becomes_its_parent_and_keeps_its_own_text():
    out = ParentExpander(parents=_searcher()).run(chunks=[chunk("c1", "child one", 0.9)])
    (expanded,) = out.chunks
    assert expanded.content.startswith("parent ten") and expanded.child_content == "child one"
    assert expanded.parent_id == 10 and expanded.chunk_id == "c1"


def test_the_parents_place_in_the_original_comes_with_it():
    s = FakeSearcher()
    s.add("c1", "child one", unit(1, 0, 0), parent=(10, "parent ten: child one.", {"page": 4, "boxes": []}))
    (expanded,) = ParentExpander(parents=s).run(chunks=[chunk("c1", "child one", 0.9)]).chunks
    assert expanded.parent_location == {"page": 4, "boxes": []}


def test_two_children_of_one_parent_collapse_keeping_the_best_score():
    out = ParentExpander(parents=_searcher()).run(
        chunks=[chunk("c3", "orphan", 0.95), chunk("c1", "child one", 0.5), chunk("c2", "child two", 0.8)])
    assert [(c.chunk_id, c.score) for c in out.chunks] == [("c3", 0.95), ("c2", 0.8)]


def test_the_collapsed_parent_keeps_the_other_childrens_text_for_compression():
    out = ParentExpander(parents=_searcher()).run(chunks=[chunk("c1", "child one", 0.5), chunk("c2", "child two", 0.8)])
    (expanded,) = out.chunks
    assert expanded.child_content == "child two" and expanded.sibling_contents == ("child one",)


def test_a_lone_child_has_no_siblings():
    (expanded,) = ParentExpander(parents=_searcher()).run(chunks=[chunk("c1", "child one", 0.9)]).chunks
    assert expanded.sibling_contents == ()


def test_chunks_without_parent_and_web_chunks_pass_unchanged():
    items = [chunk("c3", "orphan", 0.9), web_chunk("w", "web text")]
    assert ParentExpander(parents=_searcher()).run(chunks=items).chunks == tuple(items)


def test_lookup_failure_keeps_the_children_with_a_note():
    s = _searcher()
    s.fail_lookup = True
    out = ParentExpander(parents=s).run(chunks=[chunk("c1", "child one")])
    assert out.chunks[0].content == "child one" and "failed" in out.notes[0]


def test_empty_input():
    assert ParentExpander(parents=_searcher()).run(chunks=[]).chunks == ()
