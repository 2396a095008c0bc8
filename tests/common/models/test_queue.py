"""The key queue is a ring buffer: oldest keys overwritten first, pointer wraps to 0."""
import pytest
import torch

from common.models.queue import KeyQueue


def test_starts_as_random_unit_vectors():
    q = KeyQueue(6, 4, torch.Generator().manual_seed(0))
    assert torch.allclose(q.keys.norm(dim=1), torch.ones(6)) and int(q.ptr) == 0


def test_ring_buffer_wraps_around():
    q = KeyQueue(6, 2)
    batches = [torch.full((2, 2), float(i)) for i in range(1, 5)]
    for b in batches[:3]:
        q._dequeue_and_enqueue(b)
    assert int(q.ptr) == 0  # 3 batches of 2 filled 6 rows and wrapped
    assert q.keys[:, 0].tolist() == [1, 1, 2, 2, 3, 3]
    q._dequeue_and_enqueue(batches[3])  # overwrites the oldest batch only
    assert q.keys[:, 0].tolist() == [4, 4, 2, 2, 3, 3] and int(q.ptr) == 2


def test_size_must_be_a_multiple_of_the_global_batch():
    with pytest.raises(ValueError, match="not a multiple of the global batch 4"):
        KeyQueue(6, 2)._dequeue_and_enqueue(torch.zeros(4, 2))


def test_negatives_are_a_detached_copy():
    q = KeyQueue(4, 2)
    neg = q.negatives()
    q._dequeue_and_enqueue(torch.zeros(2, 2))
    assert not neg.requires_grad and neg[:2].abs().sum() > 0
