"""A tiny, deterministic DAP (TR + RTL, rho = 1, no dropout) training run in a fresh process,
under ``python`` or ``torchrun``. argv: out_dir max_steps save_every [stop_after];
env ZERO_STAGE (default 0)."""
import os
import sys

import torch

from common.models.encoder import EncoderSpec, build_mlm_model
from common.models.tokenizer import train_wordpiece
from common.training.trainer import Trainer, TrainingArguments
from papers.dap.data import DAPCollator
from papers.dap.model import DAPModel

argv = [a for a in sys.argv[1:] if not a.startswith("--local_rank")]  # added by the deepspeed launcher
out, max_steps, save_every = argv[0], int(argv[1]), int(argv[2])
stop_after = int(argv[3]) if len(argv) > 3 else None
pairs = [(f"ku{i % 7} ma{i % 5} so{i % 3} li{i % 11}", f"the man{i % 5} sees dog{i % 7} {i % 3} at {i % 11}", 1)
         for i in range(96)]
# every rank trains the same (deterministic) vocabulary into its own folder: two ranks saving into one folder
# while the other reads it raced (an empty tokenizer.json, once in CI)
rank = os.environ.get("RANK", "0")
tok = train_wordpiece([s for a, b, _ in pairs for s in (a, b)], 120, f"{out}/tok_rank{rank}", min_frequency=1)
torch.manual_seed(0)
mlm = build_mlm_model(EncoderSpec(hidden_size=16, num_layers=2, num_heads=2, intermediate_size=32, dropout=0.0),
                      len(tok))
model = DAPModel(mlm, ["tr", "rtl"], temperature=0.1, rtl_layers=1, pooling="mean", mask_token_id=tok.mask_token_id)
args = TrainingArguments(output_dir=f"{out}/run", max_steps=max_steps, global_batch_size=8, learning_rate=1e-3,
                         warmup_steps=2, save_every=save_every, log_every=1, seed=5, stop_after=stop_after,
                         zero_stage=int(os.environ.get("ZERO_STAGE", "0")))
trainer = Trainer(model, pairs, DAPCollator(tok, 16, ["tr", "rtl"], rho=1.0), args)
trainer.train()
if stop_after is None and trainer.rank == 0:
    torch.save({k: v.detach().clone() for k, v in trainer.unwrap().state_dict().items()}, f"{out}/final.pt")
