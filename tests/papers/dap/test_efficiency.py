"""Table 6 on the paper's basis (papers/dap/efficiency.py): the TLM head counted at every position, by hand; the
paper's latency ratios read from reported.yaml (0.88 / 0.51 and 1.34 / 0.51)."""
from types import SimpleNamespace

import pytest
import torch
from transformers import BertConfig
from transformers.models.bert.modeling_bert import BertOnlyMLMHead

from papers.dap.efficiency import dense_tlm_head_extra


def test_dense_tlm_head_adds_the_head_at_the_unmasked_positions():
    """A BERT MLM head (dense d x d, then the d x V decoder): 2 x 10 x 2S = 40 positions, 6 masked, so the head runs
    at 34 more positions: 34 x 2 x (d^2 + d V) FLOPs with d = 16, V = 50."""
    cfg = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
    labels = torch.full((2, 20), -100)
    labels[0, :4], labels[1, 3:5] = 7, 9
    model = SimpleNamespace(mlm_head=BertOnlyMLMHead(cfg),
                            encoder=SimpleNamespace(backbone=SimpleNamespace(config=cfg)))
    assert dense_tlm_head_extra(model, {"tlm_labels": labels}) == 34 * 2 * (16 * 16 + 16 * 50)
    assert dense_tlm_head_extra(SimpleNamespace(mlm_head=None), {}) == 0.0


def test_the_benchmark_quotes_table_6s_latency_ratios():
    from bench.overheads import PAPER_TABLE6

    assert PAPER_TABLE6 == pytest.approx({"dap": 0.88 / 0.51, "tr_tlm": 1.34 / 0.51})
    assert round(PAPER_TABLE6["tr_tlm"], 2) == 2.63 and round(PAPER_TABLE6["dap"], 2) == 1.73
