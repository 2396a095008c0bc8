"""Run a tiny MoCo-BERT training in a fresh process, under ``python`` or ``torchrun``.
argv: out_dir max_steps save_every dropout [stop_after]; env PRECISION (default fp32)."""
import os
import sys

import torch

from common.models.encoder import EncoderSpec, SentenceEncoder, build_encoder
from common.models.tokenizer import train_wordpiece
from common.training.trainer import Trainer, TrainingArguments
from papers.moco.data import MocoCollator
from papers.moco.model import DualMomentumContrast

out, max_steps, save_every, dropout = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
stop_after = int(sys.argv[5]) if len(sys.argv) > 5 else None
pairs = [(f"ku{i % 7} ma{i % 5} so{i % 3} li{i % 11}", f"the man{i % 5} sees dog{i % 7} {i % 3} at {i % 11}")
         for i in range(96)]
rank = os.environ.get("RANK", "0")  # one folder per rank: two ranks saving into one folder race
tok_x = train_wordpiece([a for a, _ in pairs], 100, f"{out}/tok_x{rank}", min_frequency=1)
tok_y = train_wordpiece([b for _, b in pairs], 100, f"{out}/tok_y{rank}", min_frequency=1)
torch.manual_seed(0)
spec = EncoderSpec(hidden_size=16, num_layers=1, num_heads=2, intermediate_size=32, dropout=dropout)
model = DualMomentumContrast(SentenceEncoder(build_encoder(spec, len(tok_x)), "mean"),
                             SentenceEncoder(build_encoder(spec, len(tok_y)), "mean"),
                             queue_size=24, temperature=0.1, momentum=0.9, seed=3)
args = TrainingArguments(output_dir=f"{out}/run", max_steps=max_steps, global_batch_size=8, learning_rate=1e-2,
                         warmup_steps=2, save_every=save_every, log_every=1, seed=5, stop_after=stop_after,
                         precision=os.environ.get("PRECISION", "fp32"))
trainer = Trainer(model, pairs, MocoCollator(tok_x, tok_y, 16), args)
trainer.train()
if stop_after is None and trainer.rank == 0:
    torch.save({k: v.detach().clone() for k, v in trainer.unwrap().state_dict().items()}, f"{out}/final.pt")
