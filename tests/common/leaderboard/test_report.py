import pytest

from common.leaderboard.report import cell


def tatoeba(xx2en: str, en2xx: str, main_score: float) -> dict:
    return {"items": {"deu": {"xx2en": xx2en, "en2xx": en2xx}}, "main_score": main_score}


def test_cell_gives_the_mean_over_seeds_with_its_interval():
    d = cell("tatoeba@cosine", [tatoeba("1111", "1100", 75.0), tatoeba("1111", "1111", 100.0)])
    assert d.mean == pytest.approx(87.5) and d.seeds == 2 and 62.5 <= d.lo <= d.mean <= d.hi <= 100.0
    right = cell("tatoeba@cosine", [tatoeba("11", "11", 100.0)])
    assert (right.mean, right.lo, right.hi) == (100.0, 100.0, 100.0)


def test_cell_refuses_items_that_do_not_give_the_main_score():
    with pytest.raises(ValueError, match="tatoeba@cosine: the item-level metric of seed index 1 gives 50.0"):
        cell("tatoeba@cosine", [tatoeba("11", "11", 100.0), tatoeba("10", "10", 40.0)])
