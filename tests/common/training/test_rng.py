"""A rank's RNG state (common/training/rng.py): Python, NumPy, the CPU generator and the rank's CUDA generator, in
every checkpoint, restored on resume."""
import random

import numpy as np
import torch

from common.training import rng
from common.training.trainer import Trainer, TrainingArguments
from tests.common.training.test_precision import EXAMPLES, Tiny, collate


def draws():
    out = [random.random(), float(np.random.rand()), float(torch.rand(1))]
    if torch.cuda.is_available():
        out.append(float(torch.rand(1, device="cuda")))
    return out


def test_capture_restore_round_trip():
    state = rng.capture()
    assert tuple(state) == rng.KEYS
    assert (state["cuda"] is None) == (not torch.cuda.is_available())
    first = draws()
    rng.restore(state)
    assert draws() == first


def test_checkpoints_hold_every_ranks_state_with_the_cuda_generator(tmp_path):
    args = TrainingArguments(output_dir=str(tmp_path), max_steps=4, global_batch_size=4, learning_rate=1e-2,
                             save_every=2, log_every=1, tensorboard=False)
    Trainer(Tiny(), EXAMPLES, collate, args).train()
    from common.training.checkpoint_load import allowed_globals

    with torch.serialization.safe_globals(allowed_globals()):  # NumPy's RNG state holds an array
        client = torch.load(tmp_path / "checkpoints" / "step00000002" / "mp_rank_00_model_states.pt",
                            weights_only=True)
    assert client["rng_per_rank"] and len(client["rng"]) == 1 and tuple(client["rng"][0]) == rng.KEYS
