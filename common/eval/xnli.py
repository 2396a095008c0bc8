"""Zero-shot cross-lingual NLI (Conneau et al. 2018), protocol of DAP (Li et al. 2023,
section 4.6, appendix C) following InfoXLM: fine-tune the whole encoder as the model type's
sequence classifier over ``[CLS] premise [SEP] hypothesis [SEP]`` (BERT: the pre-trained
pooler over the [CLS] state, which saved encoders keep from their checkpoint, then a linear
layer; XLM-R: RoBERTa's classification head) using English training data only, then report
accuracy (%) on every language's test items.

Paper scale: English MultiNLI train, XNLI test, Table 9 (batch 256, lr 5e-5, 2 epochs,
max length 128, weight decay 0). Mini scale: only the labelled XNLI dev set is available
here, so its items are split once by premise (no premise on both sides): English items of the
training part train, and every language is tested on the remaining items (tables say so). Smoke
scale: the synthetic NLI set, split the same way.
"""
from __future__ import annotations

import logging
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from transformers import AutoModelForSequenceClassification, BatchEncoding, PreTrainedTokenizerBase

from common.data import loaders
from common.data.loaders import NliExamples
from common.eval import finetune
from common.eval.finetune import FinetuneArguments, check_length
from common.models.tokenizer import load_tokenizer

log = logging.getLogger(__name__)

NliBatch = tuple[BatchEncoding, torch.Tensor]  # encoded pairs, labels


def split_by_premise(premises: list[str], train_fraction: float, seed: int) -> tuple[list[int], list[int]]:
    """Disjoint train/test item indices (the same items in every language) such that no premise is in both:
    XNLI dev has three hypotheses per premise, so an item-level split would test on premises seen in
    training. Premise groups are shuffled and assigned to train until ``train_fraction`` of the items is reached."""
    groups: dict[str, list[int]] = {}
    for i, p in enumerate(premises):
        groups.setdefault(p, []).append(i)
    order = list(groups.values())
    random.Random(seed).shuffle(order)
    train: list[int] = []
    test: list[int] = []
    target = round(len(premises) * train_fraction)
    for items in order:
        (train if len(train) < target else test).extend(items)
    return sorted(train), sorted(test)


def subset(ex: NliExamples, idx: list[int]) -> NliExamples:
    return NliExamples([ex.premise[i] for i in idx], [ex.hypothesis[i] for i in idx], [ex.label[i] for i in idx])


def _batches(ex: NliExamples, tok: PreTrainedTokenizerBase, order: list[int], bs: int, max_length: int,
             device: str) -> Iterator[NliBatch]:
    for s in range(0, len(order), bs):
        idx = order[s:s + bs]
        enc = tok([ex.premise[i] for i in idx], [ex.hypothesis[i] for i in idx], padding=True,
                  truncation=True, max_length=max_length, return_tensors="pt").to(device)
        yield enc, torch.tensor([ex.label[i] for i in idx], device=device)


def finetune_and_evaluate(model_path: str, tokenizer: PreTrainedTokenizerBase, train: NliExamples,
                          tests: dict[str, NliExamples], args: FinetuneArguments, device: str = "cpu",
                          precision: str = "fp32", num_labels: int = 3) -> dict[str, Any]:
    """Fine-tune a sequence-pair classifier (the model type's: see the module docstring) on ``train``; accuracy (%)
    on each of ``tests`` (the same protocol for XNLI and PAWS-X)."""
    torch.manual_seed(args.seed)
    model = AutoModelForSequenceClassification.from_pretrained(model_path, num_labels=num_labels).to(device)
    check_length(model, args.max_length, model_path)

    def batches(order: list[int]) -> Iterator[NliBatch]:
        return _batches(train, tokenizer, order, args.batch_size, args.max_length, device)

    def loss_fn(m: nn.Module, batch: NliBatch) -> torch.Tensor:
        enc, labels = batch
        return F.cross_entropy(m(**enc).logits.float(), labels)

    stats = finetune.train(model, len(train), batches, loss_fn, args, device, precision)
    acc, items = {}, {}
    with torch.no_grad():
        for lang, ex in tests.items():
            ok = torch.cat([model(**enc).logits.argmax(-1) == labels for enc, labels in
                            _batches(ex, tokenizer, list(range(len(ex))), args.eval_batch_size, args.max_length,
                                     device)])
            acc[lang] = 100.0 * ok.float().mean().item()
            items[lang] = "".join("1" if x else "0" for x in ok.tolist())
    return {"accuracy": acc, "average": float(np.mean(list(acc.values()))),
            "main_score": float(np.mean(list(acc.values()))), **stats, "n_train": len(train), "items": items}


def run(model_dir: str | Path, manifest: dict[str, Any], params: dict[str, Any], seed: int,
        precision: str = "fp32") -> tuple[dict[str, Any], list[str], list[Path]]:
    """The XNLI protocol on a corpus manifest: English MultiNLI train and XNLI test when the manifest
    names them (``xnli_train``), else the labelled dev items split into English training items and
    test items of every language (the smoke and mini scales)."""
    root = Path(manifest["nli_dir"])
    langs = manifest["nli_languages"]
    if manifest.get("xnli_train"):
        train = loaders.read_xnli_tsv(manifest["xnli_train"])
        if params.get("translate_train"):  # translate-train-all: English plus every machine-translated train set
            extra = manifest.get("xnli_translate_train")
            if not extra:
                raise KeyError("translate-train-all needs the corpus's xnli_translate_train files (XNLI-MT)")
            parts = [train, *(loaders.read_xnli_tsv(p) for _, p in sorted(extra.items()))]
            train = NliExamples(*(sum((getattr(x, f) for x in parts), []) for f in ("premise", "hypothesis", "label")))
        tests = {lang: loaders.read_xnli_tsv(root / f"test-{lang}.tsv") for lang in langs}
        files = [Path(manifest["xnli_train"])] + [root / f"test-{lang}.tsv" for lang in langs]
        protocol = ("trained on English MultiNLI" + (" and its translations (XNLI-MT)" if params.get("translate_train")
                                                     else "") + ", tested on XNLI test")
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
    args = finetune.arguments(params, seed)
    scores = finetune_and_evaluate(str(model_dir), load_tokenizer(model_dir), train, tests, args, finetune.device(),
                                   precision)
    scores["protocol"] = protocol
    scores["clusters"] = premise_clusters(tests["en"] if "en" in tests else next(iter(tests.values())))
    return scores, langs, files


def premise_clusters(examples: NliExamples) -> list[int]:
    """Each test item's premise number (first appearance order): XNLI asks three hypotheses of every premise, and
    the claims' bootstrap draws a premise with all of them (common/report/claims.py)."""
    number: dict[str, int] = {}
    return [number.setdefault(p, len(number)) for p in examples.premise]
