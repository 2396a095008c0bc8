"""Every paper's model step with length-bucketed encoder calls (``training.length_buckets``,
common/training/length_buckets.py) gives the padded step's loss, gradients and state (dropout off): the same batch,
the same negatives, less padding. Covers the backbones the papers call directly (HICTL's language-model and word
passes, DAP's TLM) and the momentum encoders of MoCo-BERT."""
import copy

import pytest
import torch

from common.training.model_switches import apply_model_switches
from tests.papers.steps import STEPS
from tests.papers.test_compiled_steps import TOLERANCE, model_step, run


@pytest.mark.parametrize("name", list(STEPS))
def test_the_bucketed_step_equals_the_padded_one(name):
    padded_model, batch = STEPS[name]()
    bucketed_model = copy.deepcopy(padded_model)
    apply_model_switches(bucketed_model, {"length_buckets": 2, "length_multiple": 1})
    loss, grads, state = run(padded_model, batch, model_step(padded_model))
    b_loss, b_grads, b_state = run(bucketed_model, batch, model_step(bucketed_model))
    assert torch.allclose(b_loss, loss, **TOLERANCE), (float(b_loss), float(loss))
    for n, g in grads.items():
        assert (g is None) == (b_grads[n] is None), n
        if g is not None:
            assert torch.allclose(b_grads[n], g, **TOLERANCE), (n, float((b_grads[n] - g).abs().max()))
    for k, v in state.items():
        assert torch.allclose(b_state[k].double(), v.double(), **TOLERANCE), k
