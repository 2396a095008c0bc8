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


@pytest.mark.slow  # ~19 s on 2 cores: a dynamo capture of the bucketed step
def test_hictl_bucketed_and_compiled_as_at_paper_scale():
    """HICTL's paper config compiles its step and buckets its encoder calls: the bucketing's host read of the groups'
    widths breaks the graph there, and the captured pieces give the padded eager step's loss and gradients (dynamo's
    capture only: the backward graphs of a compiled step are tested in tests/papers/test_compiled_steps.py)."""
    padded_model, batch = STEPS["hictl/hictl_hns"]()
    compiled_model = copy.deepcopy(padded_model)
    apply_model_switches(compiled_model, {"length_buckets": 2, "length_multiple": 1})
    loss, grads, _ = run(padded_model, batch, model_step(padded_model))
    torch._dynamo.reset()
    compiled = torch.compile(model_step(compiled_model), backend="eager")  # dynamo's capture and its graph breaks
    c_loss, c_grads, _ = run(compiled_model, batch, compiled)
    assert torch.allclose(c_loss, loss, **TOLERANCE), (float(c_loss), float(loss))
    for n, g in grads.items():
        if g is not None:
            assert torch.allclose(c_grads[n], g, **TOLERANCE), (n, float((c_grads[n] - g).abs().max()))
