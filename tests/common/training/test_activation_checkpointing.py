"""Activation checkpointing, full and selective (common/training/activation_checkpointing.py): the same loss and
gradients as no checkpointing (dropout on), and what each mode keeps for the backward pass, counted by the census's
probe and worked out by hand for a two-product layer."""
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from common.census.probe import saved_activation_bytes
from common.training.activation_checkpointing import checkpoint_kwargs, enable_activation_checkpointing, mode_of

ROOT = Path(__file__).resolve().parents[3]
B, D, F = 8, 16, 64  # rows, width, feed-forward width


class Block(nn.Module):
    """x -> tanh(W2 gelu(W1 x)): two matrix products (addmm), three cheap operations."""

    def __init__(self) -> None:
        super().__init__()
        self.up, self.down = nn.Linear(D, F), nn.Linear(F, D)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.down(nn.functional.gelu(self.up(x))))


class Stack(nn.Module):
    """Two checkpointable blocks, switched on like our own decoders (``activation_checkpointing_enable``)."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([Block(), Block()])
        self.kwargs: dict | None = None

    def activation_checkpointing_enable(self, activation_checkpointing_kwargs=None) -> None:
        self.kwargs = activation_checkpointing_kwargs

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x) if self.kwargs is None else checkpoint(block, x, **self.kwargs)
        return x


def tiny_bert() -> nn.Module:
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=50, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=64, max_position_embeddings=16, hidden_dropout_prob=0.1,
                     attention_probs_dropout_prob=0.1)
    return BertModel(cfg).train()


def bert_step(model: nn.Module) -> tuple[torch.Tensor, list[torch.Tensor]]:
    ids = torch.randint(1, 50, (4, 12), generator=torch.Generator().manual_seed(1))
    mask = torch.ones_like(ids)
    mask[1, 7:] = 0  # padding, as in a real batch
    torch.manual_seed(2)  # the same dropout masks in every mode
    loss = model(input_ids=ids, attention_mask=mask).last_hidden_state.square().mean()
    loss.backward()
    return loss.detach(), [p.grad.clone() for p in model.parameters() if p.grad is not None]


@pytest.mark.parametrize("mode", ["full", "selective"])
def test_a_checkpointed_bert_has_the_loss_and_gradients_of_the_plain_one(mode):
    plain_loss, plain_grads = bert_step(tiny_bert())
    model = tiny_bert()
    enable_activation_checkpointing(model, mode)
    assert model.is_activation_checkpointing
    loss, grads = bert_step(model)
    assert torch.equal(loss, plain_loss)
    assert len(grads) == len(plain_grads)
    for g, want in zip(grads, plain_grads):
        assert torch.allclose(g, want, rtol=1e-5, atol=1e-7)


def test_selective_under_autocast_with_two_calls_in_one_region():
    """A pair's two sides encoded in one bf16 autocast region: the second call finds the weights' casts in autocast's
    cache, its recomputation (a region of its own) would not; selective checkpointing runs without that cache and
    gives the plain step's gradients. The plain step is run without the cache too: with it, the two calls' gradients
    of a shared cast add up in bf16 before the cast's backward, without it in fp32 (a last-digit difference)."""
    grads = []
    for mode in (False, "selective"):
        model = tiny_bert()
        enable_activation_checkpointing(model, mode)
        ids = torch.randint(1, 50, (2, 4, 12), generator=torch.Generator().manual_seed(1))
        torch.manual_seed(2)
        with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=mode == "selective"):
            x, y = (model(input_ids=side).last_hidden_state[:, 0] for side in ids)  # (4, 32) each
            loss = (x.float() @ y.float().T).logsumexp(1).mean()
        loss.backward()
        grads.append([p.grad for p in model.parameters() if p.grad is not None])
    for g, want in zip(*grads):
        assert torch.allclose(g, want, rtol=1e-5, atol=1e-7)
    assert torch.is_autocast_cache_enabled()  # the switch leaves autocast's default as it found it


def test_what_each_mode_keeps_worked_out_by_hand():
    """Full keeps each block's input (B x D floats); selective adds its two products' outputs (B x F and B x D):
    the gelu and tanh outputs are recomputed. Without checkpointing autograd keeps more than both (its own choice of
    tensors: the products, gelu's output, tanh's output)."""
    x = torch.randn(B, D, requires_grad=True)
    kept = {}
    for mode in ("none", "full", "selective"):
        torch.manual_seed(0)
        model = Stack()
        enable_activation_checkpointing(model, False if mode == "none" else mode)
        kept[mode], out = saved_activation_bytes(model, lambda m=model: m(x))
        out.sum().backward()
    floats = 4
    assert kept["full"] == 2 * B * D * floats  # the stack's input and the first block's output
    assert kept["selective"] == kept["full"] + 2 * (B * F + B * D) * floats
    assert kept["none"] > kept["selective"]


def test_selective_keeps_the_products_of_the_bert_and_less_than_no_checkpointing():
    """The probe's count for the BERT: full < selective < none, and the selective run recomputes no product (the
    forward's matrix products run once per layer in the backward pass under full checkpointing, never under
    selective)."""
    from torch.utils.flop_counter import FlopCounterMode

    kept, flops = {}, {}
    for mode in (False, "full", "selective"):
        model = tiny_bert()
        enable_activation_checkpointing(model, mode)
        ids = torch.randint(1, 50, (4, 12), generator=torch.Generator().manual_seed(1))
        with FlopCounterMode(display=False) as counter:
            kept[mode], out = saved_activation_bytes(model, lambda m=model, i=ids: m(input_ids=i).last_hidden_state)
            out.square().mean().backward()
        flops[mode] = counter.get_total_flops()
    assert kept["full"] < kept["selective"] < kept[False]
    assert flops["selective"] == flops[False] < flops["full"]


def test_modes_and_the_schema():
    from common.config import load_config, validate

    assert [mode_of(v) for v in (False, None, True, "full", "selective")] == [None, None, "full", "full", "selective"]
    with pytest.raises(ValueError, match="partial"):
        mode_of("partial")
    assert "context_fn" in checkpoint_kwargs("selective") and "context_fn" not in checkpoint_kwargs("full")
    cfg = load_config("vmsst", "smoke")
    schema = ROOT / "papers" / "vmsst" / "config" / "schema.yaml"
    for value in (True, False, "full", "selective"):
        validate({**cfg, "training": {**cfg["training"], "gradient_checkpointing": value}}, schema, "x")
    with pytest.raises(ValueError, match="gradient_checkpointing"):
        validate({**cfg, "training": {**cfg["training"], "gradient_checkpointing": "partial"}}, schema, "x")


def test_selective_never_keeps_an_op_that_draws_random_numbers():
    """A kept op is skipped in the recomputation; one that draws (CUDA's fused attention with dropout) would leave
    the generator where the forward's did not, and every later dropout of the layer would draw other masks. Fused
    attention is kept without attention dropout only; dropout's own draws are always recomputed."""
    from torch.utils.checkpoint import CheckpointPolicy

    from common.training.activation_checkpointing import policy

    aten, q = torch.ops.aten, torch.randn(1, 2, 4, 8)
    keep, again = CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_RECOMPUTE
    assert policy(None, aten._scaled_dot_product_efficient_attention.default, q, q, q, None, True, 0.0) == keep
    assert policy(None, aten._scaled_dot_product_efficient_attention.default, q, q, q, None, True, 0.1) == again
    assert policy(None, aten._scaled_dot_product_flash_attention.default, q, q, q, dropout_p=0.1) == again
    assert policy(None, aten._scaled_dot_product_flash_attention_for_cpu.default, q, q, q) == keep  # default p 0
    assert policy(None, aten.addmm.default, q[0, 0, 0], q[0, 0], q[0, 0].T) == keep
    assert policy(None, aten.native_dropout.default, q, 0.1, True) == again
    assert policy(None, aten.gelu.default, q) == again
