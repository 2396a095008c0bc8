"""Micro-batches with accumulated gradients (``training.micro_batch_per_gpu``, common/training/trainer.py): a step
split in micro-batches takes the optimizer step of the whole batch (against plain SGD on the whole batch), only for
a model whose loss is a mean over its examples, and shapes that do not divide are errors naming the numbers."""

import pytest
import torch

from common.training.metrics_log import read_metrics
from common.training.trainer import Trainer, TrainingArguments, accumulation_steps
from tests.common.training.test_precision import Tiny

EXAMPLES = [torch.randn(6, generator=torch.Generator().manual_seed(i)) for i in range(16)]


class MeanLoss(Tiny):  # a mean over the batch's elements: a mean over its examples
    batch_decomposable = True


class InBatch(MeanLoss):
    batch_decomposable = False


def collate(xs, _generator):
    return {"x": torch.stack(xs)}


def _args(out, **kw):
    kw = {"grad_clip": 0.0, **kw}
    return TrainingArguments(output_dir=str(out), max_steps=3, global_batch_size=8, learning_rate=0.1,
                             lr_schedule="constant", log_every=1, adam_epsilon=1.0, tensorboard=False, **kw)


@pytest.mark.parametrize("weight_decay, grad_clip", [(0.0, 0.0), (0.1, 0.01)])
def test_micro_batches_take_the_whole_batchs_step(tmp_path, weight_decay, grad_clip):
    """Against plain AdamW on the whole batch. With decay and clipping on (the second case), the reference decays
    only the weight matrices (biases and LayerNorm never; ``_param_groups``) and clips the whole batch's gradient
    by its global norm; 0.01 is far below the gradient's norm here, so the clip binds at every step."""
    trainer = Trainer(MeanLoss(), EXAMPLES, collate, _args(tmp_path, micro_batch_per_gpu=2,
                                                           weight_decay=weight_decay, grad_clip=grad_clip))
    trainer.train()
    assert trainer.accum == 4
    ref = MeanLoss()
    # epsilon 1: Adam's step depends on the gradient's scale, so a sum of micro-batch gradients would not pass
    groups = [{"params": [ref.a.weight, ref.b.weight], "weight_decay": weight_decay},
              {"params": [ref.a.bias, ref.b.bias], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=0.1, eps=1.0)
    losses = []
    for step in range(3):
        opt.zero_grad()
        loss = ref(torch.stack([EXAMPLES[i] for i in trainer.sampler.local_indices(step)]))["loss"]
        loss.backward()
        if grad_clip:
            assert torch.nn.utils.clip_grad_norm_(ref.parameters(), grad_clip) > 10 * grad_clip  # it binds
        opt.step()
        losses.append(loss.item())
    for (name, p), q in zip(trainer.unwrap().named_parameters(), ref.parameters()):
        assert torch.allclose(p, q, atol=1e-6, rtol=0), name
    # the logged loss is the mean over the step's micro-batches: the whole batch's loss
    logged = [r["loss"] for r in read_metrics(tmp_path)]
    assert logged == pytest.approx(losses, abs=1e-5)


def test_only_a_mean_over_examples_may_be_split(tmp_path):
    with pytest.raises(ValueError, match="InBatch's loss is not declared a mean over its examples"):
        Trainer(InBatch(), EXAMPLES, collate, _args(tmp_path, micro_batch_per_gpu=2)).train()
    # a micro batch as large as the rank's share is no split
    assert accumulation_steps(_args(tmp_path, micro_batch_per_gpu=8), 1) == 1
    assert accumulation_steps(_args(tmp_path, micro_batch_per_gpu=2), 2) == 2
    with pytest.raises(ValueError, match="each rank's 4 examples per step .* micro-batches of 3"):
        accumulation_steps(_args(tmp_path, micro_batch_per_gpu=3), 2)


class KeepsTrack(MeanLoss):
    """Returns a large non-scalar output beside its loss and notes whether the previous micro-batch's is still alive
    when the next forward starts."""

    def __init__(self):
        super().__init__()
        self.previous, self.alive_at_forward = None, []

    def forward(self, x):
        import weakref

        self.alive_at_forward.append(self.previous is not None and self.previous() is not None)
        out = super().forward(x)
        out["states"] = torch.randn(1024, 64) * out["loss"]  # in the graph, as a model's logits would be
        self.previous = weakref.ref(out["states"])
        return out


def test_a_micro_batchs_outputs_are_freed_before_the_next_one(tmp_path):
    model = KeepsTrack()
    Trainer(model, EXAMPLES, collate, _args(tmp_path, micro_batch_per_gpu=2)).train()
    assert len(model.alive_at_forward) == 3 * 4 and not any(model.alive_at_forward)
