"""Resume reads DeepSpeed checkpoints with ``torch.load(weights_only=True)`` (common/training/checkpoint_load.py):
our own checkpoints resume, and one that holds any other object is refused before anything in it runs."""
import pytest
import torch

from common.training.trainer import Trainer, TrainingArguments
from tests.common.training.test_precision import EXAMPLES, Tiny, collate


def args(out, **kw):
    return TrainingArguments(output_dir=str(out), max_steps=4, global_batch_size=4, learning_rate=1e-2, save_every=2,
                             log_every=1, tensorboard=False, **kw)


class Payload:
    """An object a checkpoint has no business holding (a pickle can make its class run anything on load)."""


def test_a_checkpoint_with_an_unknown_object_is_refused_on_resume(tmp_path):
    Trainer(Tiny(), EXAMPLES, collate, args(tmp_path, stop_after=3)).train()  # checkpoint at step 2
    trainer = Trainer(Tiny(), EXAMPLES, collate, args(tmp_path))
    path = tmp_path / "checkpoints" / "step00000002" / "mp_rank_00_model_states.pt"
    state = torch.load(path, weights_only=False)  # the test's own file, written a line above
    state["extra"] = Payload()
    torch.save(state, path)
    with pytest.raises(Exception, match="Weights only load failed") as caught:
        trainer.train()
    assert "test_checkpoint_load.Payload" in str(caught.value)
    assert type(trainer.engine.checkpoint_engine).__name__ == "WeightsOnlyCheckpointEngine"
    del state["extra"]
    torch.save(state, path)
    summary = Trainer(Tiny(), EXAMPLES, collate, args(tmp_path)).train()  # the checkpoint as written resumes
    assert summary["step"] == 4
