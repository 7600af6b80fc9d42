"""Token estimation and greedy packing under a token budget."""
import pytest

from docmind.tokens import estimate_tokens, pack_greedily


def test_packing_skips_an_item_that_does_not_fit_and_keeps_a_later_shorter_one():
    kept, used = pack_greedily(["aaaa", "bbbbbbbbbb", "cc"], 6, lambda item, _n: len(item))
    assert kept == ["aaaa", "cc"] and used == 6


def test_the_cost_is_told_how_many_items_are_already_in():
    seen: list[int] = []

    def cost(item: str, kept: int) -> int:
        seen.append(kept)
        return len(item) + (1 if kept else 0)

    kept, used = pack_greedily(["ab", "cd", "ef"], 5, cost)
    assert kept == ["ab", "cd"] and used == 5 and seen == [0, 1, 2]


@pytest.mark.parametrize("budget", [0, -3])
def test_nothing_fits_a_budget_of_zero_or_less(budget):
    assert pack_greedily(["", "a"], budget, lambda item, _n: len(item)) == ([], 0)


def test_cjk_text_is_never_estimated_below_one_token_a_character():
    assert estimate_tokens("知识库问答") >= 5
