"""Each paper's fast step against its reference step, at rehearsal widths: the fused vocabulary loss and the one
encoder call for both sides (the defaults) give the loss terms and gradients of the plain, materialised logits and
two encoder calls (``vocab_loss="plain"``, ``joint_sides=False``: the computation these models did before, with
dropout off). VMSST's decoder scores the collator's list of real target tokens; without that list it scores every
position with padding ignored: the same values."""
import copy

import pytest
import torch

from tests.papers.steps import STEPS

REFERENCE = {"vocab_loss": "plain", "joint_sides": False}


def losses_and_grads(model: torch.nn.Module, batch: dict) -> tuple[dict, dict]:
    torch.manual_seed(5)
    out = model(**batch)
    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    grads = torch.autograd.grad(out["loss"], [p for _, p in params], allow_unused=True)
    return {k: v.detach() for k, v in out.items()}, {n: g for (n, _), g in zip(params, grads)}


def assert_same(a: tuple[dict, dict], b: tuple[dict, dict], rtol: float = 1e-4, atol: float = 1e-5) -> None:
    (out_a, grads_a), (out_b, grads_b) = a, b
    assert out_a.keys() == out_b.keys()
    for k in out_a:
        assert torch.allclose(out_a[k].double(), out_b[k].double(), rtol=rtol, atol=atol), (k, out_a[k], out_b[k])
    for n, g in grads_a.items():
        assert (g is None) == (grads_b[n] is None), n
        if g is not None:
            assert torch.allclose(g, grads_b[n], rtol=rtol, atol=atol), (n, float((g - grads_b[n]).abs().max()))


@pytest.mark.parametrize("name", [n for n in STEPS if not n.startswith("moco")])  # MoCo: two encoders, no vocabulary
def test_fused_loss_and_one_call_equal_the_reference_step(name):
    fast, batch = STEPS[name]()
    reference, _ = STEPS[name](**REFERENCE)
    assert fast.vocab_loss == "fused" if hasattr(fast, "vocab_loss") else fast.s.vocab_loss == "fused"
    assert_same(losses_and_grads(fast, batch), losses_and_grads(reference, batch))


@pytest.mark.parametrize("name", ["vmsst/vmsst", "vmsst/vmsst_contrastive"])
def test_the_listed_target_tokens_give_the_values_of_every_position(name):
    model, batch = STEPS[name]()
    assert batch["i_target_positions"].numel() < batch["i_targets"].numel()  # padding is not projected
    without = {k: v for k, v in batch.items() if not k.endswith(("_target_positions", "_target_labels"))}
    assert_same(losses_and_grads(model, batch), losses_and_grads(copy.deepcopy(model), without))


def test_bf16_fused_step_is_near_the_reference():
    """Under bf16 autocast the fused and plain vocabulary losses differ by bf16's rounding of the logits' gradient
    (DAP with RTL: loss terms within 1e-2 relative; the RTL head's gradients within 2e-2 of their largest entry)."""
    fast, batch = STEPS["dap/dap"]()
    reference, _ = STEPS["dap/dap"](vocab_loss="plain")
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a, b = losses_and_grads(fast, batch), losses_and_grads(reference, batch)
    for k in a[0]:
        assert float(a[0][k]) == pytest.approx(float(b[0][k]), rel=1e-2), k
    for n, g in a[1].items():
        if n.startswith("rtl.lm_head") and g is not None:
            assert float((g - b[1][n]).abs().max()) <= 2e-2 * float(b[1][n].abs().max()), n
