import math

from bench.mining import size_at_ratio


def test_size_at_ratio_by_hand():
    # approximate 10 s and exact 1 s at N = 100, growing as N^1 and N^2: equal where 10 x = x^2 (x = N / 100 = 10),
    # a tenth where 10 x = 0.1 x^2 (x = 100)
    assert size_at_ratio(10.0, 1.0, 1.0, 2.0, 100, 1.0) == 1000
    assert math.isclose(size_at_ratio(10.0, 1.0, 1.0, 2.0, 100, 0.1), 10_000)
    assert size_at_ratio(10.0, 1.0, 2.0, 2.0, 100, 1.0) == math.inf  # never, when the index grows as fast
