"""Run a tiny DAP training in a fresh process (DeepSpeed initialises the process group once
per process). argv: out_dir max_steps save_every [stop_after]."""
import sys

import torch

from common.models.encoder import EncoderSpec, build_mlm_model
from common.models.tokenizer import train_wordpiece
from common.training.trainer import Trainer, TrainingArguments
from papers.dap.data import DAPCollator
from papers.dap.model import DAPModel

out, max_steps, save_every = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
stop_after = int(sys.argv[4]) if len(sys.argv) > 4 else None
pairs = [(f"ku{i % 7} ma{i % 5} so{i % 3}", f"the man{i % 5} sees dog{i % 7} {i % 3}", 1) for i in range(64)]
tok = train_wordpiece([s for a, b, _ in pairs for s in (a, b)], 100, f"{out}/tok", min_frequency=1)
torch.manual_seed(0)
mlm = build_mlm_model(EncoderSpec(hidden_size=16, num_layers=2, num_heads=2, intermediate_size=32, dropout=0.1),
                      len(tok))
model = DAPModel(mlm, ["tr", "rtl"], temperature=0.1, rtl_layers=1, pooling="mean", mask_token_id=tok.mask_token_id)
args = TrainingArguments(output_dir=f"{out}/run", max_steps=max_steps, global_batch_size=8, learning_rate=1e-3,
                         warmup_steps=2, save_every=save_every, log_every=1, seed=5, stop_after=stop_after)
trainer = Trainer(model, pairs, DAPCollator(tok, 16, ["tr", "rtl"], rho=0.5), args)
trainer.train()
if stop_after is None:
    torch.save({k: v.detach().clone() for k, v in trainer.unwrap().state_dict().items()}, f"{out}/final.pt")
