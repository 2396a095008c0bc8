"""Zero-shot cross-lingual NLI (Conneau et al. 2018), protocol of DAP (Li et al. 2023,
section 4.6, appendix C) following InfoXLM: fine-tune the whole encoder with a linear
classifier on the [CLS] state of ``[CLS] premise [SEP] hypothesis [SEP]`` using English
training data only, then report accuracy (%) on every language's test items.

Paper scale: English MultiNLI train, XNLI test, Table 9 (batch 256, lr 5e-5, 2 epochs,
max length 128, weight decay 0). Mini scale: only the labelled XNLI dev set is available
here, so its items are split once by index: English items of the training part train,
and every language is tested on the remaining items (tables say so). Smoke scale: the
synthetic NLI set, split the same way.
"""
from __future__ import annotations

import logging
import math
import random
from dataclasses import dataclass

import numpy as np
import torch
from torch.nn import functional as F
from transformers import AutoModelForSequenceClassification

from common.data.loaders import NliExamples

log = logging.getLogger(__name__)


@dataclass
class XnliArguments:
    batch_size: int = 256
    learning_rate: float = 5e-5
    epochs: float = 2.0
    max_length: int = 128
    weight_decay: float = 0.0
    warmup_ratio: float = 0.1
    seed: int = 1
    eval_batch_size: int = 256


def split_items(n: int, train_fraction: float, seed: int) -> tuple[list[int], list[int]]:
    """Disjoint train/test item indices (the same items in every language)."""
    idx = list(range(n))
    random.Random(seed).shuffle(idx)
    cut = int(round(n * train_fraction))
    return sorted(idx[:cut]), sorted(idx[cut:])


def subset(ex: NliExamples, idx: list[int]) -> NliExamples:
    return NliExamples([ex.premise[i] for i in idx], [ex.hypothesis[i] for i in idx], [ex.label[i] for i in idx])


def _batches(ex: NliExamples, tok, order: list[int], bs: int, max_length: int, device):
    for s in range(0, len(order), bs):
        idx = order[s:s + bs]
        enc = tok([ex.premise[i] for i in idx], [ex.hypothesis[i] for i in idx], padding=True,
                  truncation=True, max_length=max_length, return_tensors="pt").to(device)
        yield enc, torch.tensor([ex.label[i] for i in idx], device=device)


def finetune_and_evaluate(model_path: str, tokenizer, train: NliExamples, tests: dict[str, NliExamples],
                          args: XnliArguments, device: str = "cpu") -> dict:
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    model = AutoModelForSequenceClassification.from_pretrained(model_path, num_labels=3).to(device)
    if args.max_length > model.config.max_position_embeddings:
        raise ValueError(f"XNLI max_length {args.max_length} exceeds the model's {model.config.max_position_embeddings} "
                         f"positions ({model_path}); lower eval.xnli.max_length in the config")
    steps_per_epoch = max(1, len(train) // args.batch_size)
    total = max(1, math.ceil(args.epochs * steps_per_epoch))
    opt = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay)
    warm = int(args.warmup_ratio * total)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / max(1, warm) if s < warm else max(0.0, (total - s) / max(1, total - warm)))
    model.train()
    step, losses = 0, []
    while step < total:
        order = rng.permutation(len(train)).tolist()
        for enc, labels in _batches(train, tokenizer, order[: steps_per_epoch * args.batch_size],
                                    args.batch_size, args.max_length, device):
            loss = F.cross_entropy(model(**enc).logits, labels)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            losses.append(float(loss))
            step += 1
            if step >= total:
                break
    model.eval()
    acc = {}
    with torch.no_grad():
        for lang, ex in tests.items():
            correct = 0
            for enc, labels in _batches(ex, tokenizer, list(range(len(ex))), args.eval_batch_size,
                                        args.max_length, device):
                correct += int((model(**enc).logits.argmax(-1) == labels).sum())
            acc[lang] = 100.0 * correct / len(ex)
    return {"accuracy": acc, "average": float(np.mean(list(acc.values()))), "main_score": float(np.mean(list(acc.values()))),
            "train_steps": total, "final_train_loss": float(np.mean(losses[-10:])) if losses else None,
            "n_train": len(train)}
