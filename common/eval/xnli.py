"""Zero-shot cross-lingual NLI (Conneau et al. 2018), protocol of DAP (Li et al. 2023,
section 4.6, appendix C) following InfoXLM: fine-tune the whole encoder with a linear
classifier on the [CLS] state of ``[CLS] premise [SEP] hypothesis [SEP]`` using English
training data only, then report accuracy (%) on every language's test items.

Paper scale: English MultiNLI train, XNLI test, Table 9 (batch 256, lr 5e-5, 2 epochs,
max length 128, weight decay 0). Mini scale: only the labelled XNLI dev set is available
here, so its items are split once by premise (no premise on both sides): English items of the
training part train, and every language is tested on the remaining items (tables say so). Smoke
scale: the synthetic NLI set, split the same way.
"""
from __future__ import annotations

import logging
import math
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch.nn import functional as F
from transformers import AutoModelForSequenceClassification

from common.data import loaders
from common.data.loaders import NliExamples
from common.models.encoder import autocast
from common.models.tokenizer import load_tokenizer

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


def split_by_premise(premises: list[str], train_fraction: float, seed: int) -> tuple[list[int], list[int]]:
    """Disjoint train/test item indices (the same items in every language) such that no premise is in both:
    XNLI dev has three hypotheses per premise, so an item-level split would test on premises seen in
    training. Premise groups are shuffled and assigned to train until ``train_fraction`` of the items is reached."""
    groups: dict[str, list[int]] = {}
    for i, p in enumerate(premises):
        groups.setdefault(p, []).append(i)
    order = list(groups.values())
    random.Random(seed).shuffle(order)
    train, test, target = [], [], round(len(premises) * train_fraction)
    for items in order:
        (train if len(train) < target else test).extend(items)
    return sorted(train), sorted(test)


def subset(ex: NliExamples, idx: list[int]) -> NliExamples:
    return NliExamples([ex.premise[i] for i in idx], [ex.hypothesis[i] for i in idx], [ex.label[i] for i in idx])


def _batches(ex: NliExamples, tok, order: list[int], bs: int, max_length: int, device):
    for s in range(0, len(order), bs):
        idx = order[s:s + bs]
        enc = tok([ex.premise[i] for i in idx], [ex.hypothesis[i] for i in idx], padding=True,
                  truncation=True, max_length=max_length, return_tensors="pt").to(device)
        yield enc, torch.tensor([ex.label[i] for i in idx], device=device)


def finetune_and_evaluate(model_path: str, tokenizer, train: NliExamples, tests: dict[str, NliExamples],
                          args: XnliArguments, device: str = "cpu", precision: str = "fp32") -> dict:
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    model = AutoModelForSequenceClassification.from_pretrained(model_path, num_labels=3).to(device)
    if args.max_length > model.config.max_position_embeddings:
        raise ValueError(f"XNLI max_length {args.max_length} exceeds the model's "
                         f"{model.config.max_position_embeddings} positions ({model_path}); "
                         "lower eval.xnli.max_length in the config")
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
            with autocast(device, precision):
                logits = model(**enc).logits
            loss = F.cross_entropy(logits.float(), labels)
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
    acc, items = {}, {}
    with torch.no_grad():
        for lang, ex in tests.items():
            ok = torch.cat([model(**enc).logits.argmax(-1) == labels for enc, labels in
                            _batches(ex, tokenizer, list(range(len(ex))), args.eval_batch_size, args.max_length,
                                     device)])
            acc[lang] = 100.0 * ok.float().mean().item()
            items[lang] = "".join("1" if x else "0" for x in ok.tolist())
    return {"accuracy": acc, "average": float(np.mean(list(acc.values()))),
            "main_score": float(np.mean(list(acc.values()))),
            "train_steps": total, "final_train_loss": float(np.mean(losses[-10:])) if losses else None,
            "n_train": len(train), "items": items}


def run(model_dir: str | Path, manifest: dict, params: dict, seed: int,
        precision: str = "fp32") -> tuple[dict, list[str], list[Path]]:
    """The XNLI protocol on a corpus manifest: English MultiNLI train and XNLI test when the manifest
    names them (``xnli_train``), else the labelled dev items split into English training items and
    test items of every language (the smoke and mini scales)."""
    root = Path(manifest["nli_dir"])
    langs = manifest["nli_languages"]
    if manifest.get("xnli_train"):
        train = loaders.read_xnli_tsv(manifest["xnli_train"])
        tests = {lang: loaders.read_xnli_tsv(root / f"test-{lang}.tsv") for lang in langs}
        files = [Path(manifest["xnli_train"])] + [root / f"test-{lang}.tsv" for lang in langs]
        protocol = "trained on English MultiNLI, tested on XNLI test"
    else:
        data = {lang: loaders.read_xnli_tsv(root / f"dev-{lang}.tsv") for lang in langs}
        files = [root / f"dev-{lang}.tsv" for lang in langs]
        n = len(data["en"])
        if any(len(d) != n for d in data.values()):
            raise ValueError(f"{root}: XNLI dev files must have the same items in every language")
        train_idx, test_idx = split_by_premise(data["en"].premise, params["train_fraction"], seed=1)
        train = subset(data["en"], train_idx)
        tests = {lang: subset(d, test_idx) for lang, d in data.items()}
        protocol = (f"trained on {len(train_idx)} English dev items, tested on the other {len(test_idx)} items "
                    "of every language, split by premise (labelled XNLI test data is not available here)")
    args = XnliArguments(batch_size=params["batch_size"], learning_rate=params["learning_rate"],
                         epochs=params["epochs"], max_length=params["max_length"],
                         weight_decay=params.get("weight_decay", 0.0), seed=seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    scores = finetune_and_evaluate(str(model_dir), load_tokenizer(model_dir), train, tests, args, device, precision)
    scores["protocol"] = protocol
    return scores, langs, files
