"""The retrieval factory: config rows become stage values in one place."""
from kb.retrieval.compose import retrieval_params


def test_params_clamp_lambda_and_honour_the_requested_top_k():
    from config_admin.registry import KEYS

    snapshot = {k.key: k.default for k in KEYS}
    snapshot["mmr.lambda"] = 3.0
    params = retrieval_params(snapshot, top_k=40)
    assert params.mmr_lambda == 1.0 and params.top_k == 40 and params.candidate_k == 40
