"""The evaluation census: an encoder's FLOPs against the transformer's matrix products worked out by hand, a task's
work from the sets' sizes, a job's memory from its parts."""
from __future__ import annotations

import pytest

from common.census import estimate as est
from common.census import evaluation as ev
from common.eval.tasks import get_task

H, LAYERS, FFN, LENGTH = 32, 2, 64, 16
CFG = {"encoders": {"tiny": {"hidden_size": H, "num_layers": LAYERS, "num_heads": 2, "intermediate_size": FFN,
                             "max_position": 64, "dropout": 0.0}},
       "tokenizer": {"vocab_size": 100}, "eval": {"max_length": LENGTH, "batch_size": 4, "precision": "fp32"},
       "corpus": {"kind": "paper_enzh", "paper_enzh": {"bucc_pairs": ["zh"]}}}


def dense(s: int) -> int:
    """Per layer: Q, K, V and the output projection (4 of 2 s h h) and the feed-forward (2 of 2 s h i)."""
    return LAYERS * (4 * 2 * s * H * H + 2 * 2 * s * H * FFN)


def attention(s: int) -> int:
    """Per layer: the attention scores and their weighted sum (2 of 2 s s h)."""
    return LAYERS * 2 * 2 * s * s * H


def forward_by_hand(s: int) -> int:
    return dense(s) + attention(s)


def train_by_hand(s: int) -> int:
    """Backward: the gradients of inputs and of weights (2 x forward); the fused attention kernel (no dropout here)
    recomputes the scores, which torch counts: 2.5 x its forward."""
    return 3 * dense(s) + 3.5 * attention(s)


def test_encoder_counted_under_fake_tensors_matches_the_matrix_products(tmp_path):
    c = ev.count_encoder(CFG, "tiny", LENGTH, [8], tmp_path)
    assert c.forward_flops[LENGTH] == forward_by_hand(LENGTH)
    assert c.forward_flops[8] == forward_by_hand(8)
    assert c.train_flops[8] == train_by_hand(8)
    assert c.hidden == H and c.params > LAYERS * (4 * H * H + 2 * H * FFN)
    assert c.saved_bytes[8].per_row > 0 and c.inference_bytes.fixed >= 4 * c.params  # fp32 weights are held


def test_work_from_the_sets_sizes():
    tatoeba = ev.workload(get_task("tatoeba@cosine"), CFG)  # MoCo-BERT's en-zh corpus: cmn only
    assert (tatoeba.embedded, tatoeba.products, tatoeba.at_most) == (2 * 1_000, 2 * 1_000 ** 2, True)
    xnli = ev.workload(get_task("xnli@translate-train-all"), CFG)  # MultiNLI and its 14 translations, one epoch
    assert (xnli.trained, xnli.predicted, xnli.length, xnli.batch) == (392_702 * 15, 15 * 7_500, 128, 256)
    bucc = ev.workload(get_task("bucc@distance-k3"), CFG)  # one pair, two splits, two sides
    assert (bucc.embedded, bucc.products) == (4 * 600_000, 2 * 600_000 ** 2)
    with pytest.raises(KeyError, match="no census workload"):
        ev.workload(get_task("tatoeba@cosine").__class__("x", "nope", "", "", ""), CFG)


def test_a_fine_tuning_job_holds_weights_gradients_moments_and_its_activations(tmp_path):
    c = ev.count_encoder(CFG, "tiny", LENGTH, [8], tmp_path)
    work = ev.Workload(embedded=0, trained=1_000, predicted=10, length=8, batch=32)
    row = ev.needs(work, c, LENGTH, 4, mfu=0.5)
    assert row["memory_per_gpu_gib"] * est.GIB == pytest.approx(16 * c.params + c.saved_bytes[8].at(32))
    flops = 1_000 * train_by_hand(8) + 10 * forward_by_hand(8)
    assert row["flops_run"] == flops
    assert row["wall_hours"]["a100"] == pytest.approx(flops / (312e12 * 0.5) / 3600)
    search = ev.needs(ev.Workload(embedded=5, products=1e6, held=100), c, LENGTH, 4, mfu=0.5)
    assert search["flops_run"] == 5 * forward_by_hand(LENGTH) + 2 * H * 1e6
    assert search["memory_per_gpu_gib"] * est.GIB == pytest.approx(c.inference_bytes.at(4) + 4 * H * 100)
