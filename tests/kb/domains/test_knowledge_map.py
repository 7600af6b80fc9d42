"""render_knowledge_map: the planner's YAML shape, bounded by a token budget."""
from __future__ import annotations

import yaml

from docmind.tokens import estimate_tokens
from kb.domains.knowledge_map import MapDocument, MapDomain, render_knowledge_map


def _domain(n_docs: int) -> MapDomain:
    docs = tuple(MapDocument(title=f"文档{i}", covers=("支付超时", "扣款无回调")) for i in range(n_docs))
    return MapDomain(domain_id="payment", description="支付链路问题排查", when_to_retrieve="涉及支付时检索",
                     documents=docs)


def test_it_renders_the_seed_shape():
    data = yaml.safe_load(render_knowledge_map([_domain(2)]))
    domain = data["available_knowledge_domains"][0]
    assert list(domain) == ["domain_id", "description", "when_to_retrieve", "documents"]
    assert domain["documents"][0] == {"title": "文档0", "covers": ["支付超时", "扣款无回调"]}


def test_it_drops_documents_to_fit_the_budget_but_keeps_domains():
    text = render_knowledge_map([_domain(200)], max_tokens=300)
    data = yaml.safe_load(text)
    assert estimate_tokens(text) <= 300 and data["available_knowledge_domains"][0]["domain_id"] == "payment"
