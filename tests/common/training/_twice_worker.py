"""Train the same tiny DAP run twice in one process (two Trainers, one after the other). argv: out_dir."""
import sys

import torch

from common.models.encoder import EncoderSpec, build_mlm_model
from common.models.tokenizer import train_wordpiece
from common.training.trainer import Trainer, TrainingArguments
from papers.dap.data import DAPCollator
from papers.dap.model import DAPModel

out = sys.argv[1]
pairs = [(f"ku{i % 7} ma{i % 5} so{i % 3}", f"the man{i % 5} sees dog{i % 7} {i % 3}", 1) for i in range(32)]
tok = train_wordpiece([s for a, b, _ in pairs for s in (a, b)], 100, f"{out}/tok", min_frequency=1)
for run in ("first", "second"):
    torch.manual_seed(0)
    mlm = build_mlm_model(EncoderSpec(hidden_size=16, num_layers=1, num_heads=2, intermediate_size=32), len(tok))
    args = TrainingArguments(output_dir=f"{out}/{run}", max_steps=3, global_batch_size=8, learning_rate=1e-3,
                             log_every=1, seed=5)
    Trainer(DAPModel(mlm, ["tr"], temperature=0.1, pooling="mean"), pairs, DAPCollator(tok, 16, ["tr"]), args).train()
