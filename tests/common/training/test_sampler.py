"""The batch order: every example once per epoch, ranks splitting the global batch, the order a function of
(seed, step) only; the Feistel order in O(1) memory a permutation too."""
import numpy as np
import pytest
import torch

from common.training.permutation import FeistelPermutation
from common.training.sampler import StepSampler


@pytest.mark.parametrize("n", [1, 2, 3, 7, 64, 1000, 4099])
def test_feistel_is_a_permutation(n):
    out = FeistelPermutation(n, seed=11)(np.arange(n))
    assert sorted(out.tolist()) == list(range(n))


def test_feistel_depends_on_the_seed_and_is_reproducible():
    a, b = FeistelPermutation(1000, 1)(np.arange(1000)), FeistelPermutation(1000, 2)(np.arange(1000))
    assert not np.array_equal(a, b) and np.array_equal(a, FeistelPermutation(1000, 1)(np.arange(1000)))
    assert not np.array_equal(a, np.arange(1000))
    assert FeistelPermutation(10**10, 3)(np.array([0, 10**10 - 1])).max() < 10**10  # no table: any size


@pytest.mark.parametrize("shuffle", ["randperm", "feistel"])
def test_an_epoch_sees_each_example_once_and_ranks_split_the_batch(shuffle):
    n, batch = 103, 10
    whole = StepSampler(n, batch, seed=5, shuffle=shuffle)
    epoch = [i for s in range(whole.batches_per_epoch) for i in whole.global_indices(s)]
    assert len(set(epoch)) == len(epoch) == 100 and set(epoch) <= set(range(n))
    ranks = [StepSampler(n, batch, seed=5, rank=r, world_size=2, shuffle=shuffle) for r in range(2)]
    for step in (0, 9, 10, 37):  # 10: the next epoch, another order
        assert ranks[0].local_indices(step) + ranks[1].local_indices(step) == whole.global_indices(step)
    assert whole.global_indices(10) != whole.global_indices(0)


def test_randperm_order_is_unchanged():
    """The smoke and mini results were trained in this order: epoch e of seed s is torch.randperm seeded s*1000003+e."""
    s = StepSampler(50, 5, seed=3)
    perm = torch.randperm(50, generator=torch.Generator().manual_seed(3 * 1_000_003 + 1))
    assert s.global_indices(12) == perm[10:15].tolist()
    with pytest.raises(ValueError, match="unknown shuffle"):
        StepSampler(50, 5, seed=3, shuffle="sorted")
