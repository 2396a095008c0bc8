"""Every paper's model step (forward + loss) at its rehearsal widths is one graph and compiles to the same result.

* ``torch._dynamo.explain`` finds no graph break in the step of each listed paper and variant (a host-device sync,
  a data-dependent shape or an untraceable call would each break it);
* the step compiled with ``torch.compile`` gives eager's loss and gradients, and leaves the same state (MoCo-BERT's
  queues and momentum encoders, HICTL's p_avg window), within float tolerance. The default suite compiles with the
  ``aot_eager`` backend: it captures the forward and backward graphs as the inductor does, without its C++ code
  generation (minutes a model on a 2-core CPU); the ``slow`` variant compiles with the inductor (random ops left to
  eager's generator, ``fallback_random``, so that VMSST's reparameterisation noise and HICTL's negative draws are
  the same draws).

Random sampling in a step stays in it: HICTL's word-level negatives are drawn from the model's own query
(``torch.multinomial`` on a static shape) and VMSST's latent noise from its own means; both are traced as ops,
and seeding the generator before each run makes the two runs draw alike.
"""
import copy

import pytest
import torch

from tests.papers.steps import STEPS

TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}


def run(model: torch.nn.Module, batch: dict, step) -> tuple[torch.Tensor, dict, dict]:
    """(loss, gradient of each parameter, state after the step) of ``step(model, batch)``."""
    torch.manual_seed(11)
    loss = step(batch)
    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    grads = torch.autograd.grad(loss, [p for _, p in params], allow_unused=True)
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    return loss.detach(), {n: g for (n, _), g in zip(params, grads)}, state


def model_step(model: torch.nn.Module):
    return lambda batch: model(**batch)["loss"]


@pytest.mark.parametrize("name", list(STEPS))
def test_no_graph_break_in_the_step(name):
    model, batch = STEPS[name]()
    torch._dynamo.reset()
    explained = torch._dynamo.explain(model_step(model))(batch)
    assert explained.graph_break_count == 0, [str(r.reason) for r in explained.break_reasons]
    assert explained.graph_count == 1


def check_compiled_equals_eager(name: str, backend: str) -> None:
    eager_model, batch = STEPS[name]()
    compiled_model = copy.deepcopy(eager_model)
    loss, grads, state = run(eager_model, batch, model_step(eager_model))
    torch._dynamo.reset()
    compiled = torch.compile(model_step(compiled_model), backend=backend, fullgraph=True)
    c_loss, c_grads, c_state = run(compiled_model, batch, compiled)
    assert torch.allclose(c_loss, loss, **TOLERANCE), (float(c_loss), float(loss))
    assert grads.keys() == c_grads.keys()
    for n, g in grads.items():
        assert (g is None) == (c_grads[n] is None), n
        if g is not None:
            assert torch.allclose(c_grads[n], g, **TOLERANCE), (n, float((c_grads[n] - g).abs().max()))
    for k, v in state.items():  # buffers the step writes: queues, pointers, momentum encoders, the p_avg window
        assert torch.allclose(c_state[k].double(), v.double(), **TOLERANCE), k


@pytest.mark.parametrize("name", list(STEPS))
def test_the_compiled_step_equals_eager(name):
    check_compiled_equals_eager(name, "aot_eager")


@pytest.mark.slow
@pytest.mark.parametrize("name", list(STEPS))
def test_the_inductor_compiled_step_equals_eager(name):
    from torch._inductor import config as inductor

    with inductor.patch(fallback_random=True):
        check_compiled_equals_eager(name, "inductor")
