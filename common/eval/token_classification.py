"""Structured prediction, XTREME's zero-shot protocol (Hu et al. 2020; HICTL section 4.2, Tables 1, 12-13): fine-tune
the whole encoder with a token-classification head on English data, predict tags for every test language.

* POS (Universal Dependencies v2.5, 17 universal tags): accuracy (%) over words -- Table 12's metric;
* NER (WikiANN / PAN-X, IOB2 tags PER / ORG / LOC): entity-level F1 (%) (an entity counts when its type and its
  span both match; CoNLL's definition, as XTREME's seqeval scoring).

A word's label sits on its first word piece; the other pieces are ignored in the loss and the word takes the first
piece's prediction. Sentences longer than ``max_length`` pieces are truncated (their remaining words count as
wrong). Data: CoNLL-style files, one ``word<TAB>tag`` per line, a blank line between sentences
(:func:`read_conll`); XTREME's ``panx`` and ``udpos`` files convert to it (:mod:`common.data.download`). Paper
scale only: no POS / NER data is available at the small scales.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from transformers import AutoModelForTokenClassification, PreTrainedTokenizerBase

from common.eval import finetune
from common.eval.finetune import FinetuneArguments, check_length
from common.eval.task_types import EvalContext, TaskResult, register_task_type
from common.eval.tasks import Task
from common.io import DataFormatError, read_lines
from common.models.tokenizer import load_tokenizer

Sentence = tuple[list[str], list[str]]  # (words, tags)
TokenBatch = tuple[dict[str, torch.Tensor], torch.Tensor]  # model inputs, word-piece labels


def read_conll(path: str | Path) -> list[Sentence]:
    out: list[Sentence] = []
    words: list[str] = []
    tags: list[str] = []
    for lineno, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            if words:
                out.append((words, tags))
                words, tags = [], []
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise DataFormatError(path, lineno, "expected 'word<TAB>tag'")
        words.append(parts[0])
        tags.append(parts[1])
    if words:
        out.append((words, tags))
    return out


def entities(tags: list[str]) -> set[tuple[str, int, int]]:
    """(type, first word, last word) of every IOB2 entity; an I- tag without its B- starts an entity (CoNLL)."""
    spans: set[tuple[str, int, int]] = set()
    start: int | None = None
    kind: str | None = None
    for i, tag in enumerate([*tags, "O"]):
        boundary = tag == "O" or tag.startswith("B-") or (tag.startswith("I-") and tag[2:] != kind)
        if boundary and start is not None:
            assert kind is not None  # set together with start
            spans.add((kind, start, i - 1))
            start, kind = None, None
        if tag != "O" and start is None:
            start, kind = i, tag[2:]
    return spans


def entity_counts(gold: list[str], pred: list[str]) -> tuple[int, int]:
    """One sentence's (2 x true positives, gold + predicted entities): summed over sentences, their ratio is F1."""
    g, p = entities(gold), entities(pred)
    return 2 * len(g & p), len(g) + len(p)


def word_counts(gold: list[str], pred: list[str]) -> tuple[int, int]:
    """One sentence's (correct words, words)."""
    return sum(a == b for a, b in zip(gold, pred)), len(gold)


def ratio(counts: list[tuple[int, int]]) -> float:
    den = sum(d for _, d in counts)
    return 100.0 * sum(n for n, _ in counts) / den if den else 0.0


def entity_f1(gold: list[list[str]], pred: list[list[str]]) -> float:
    return ratio([entity_counts(g, p) for g, p in zip(gold, pred)])


def word_accuracy(gold: list[list[str]], pred: list[list[str]]) -> float:
    return ratio([word_counts(g, p) for g, p in zip(gold, pred)])


def encode(tokenizer: PreTrainedTokenizerBase, sentences: list[Sentence], labels: dict[str, int],
           max_length: int) -> dict[str, Any]:
    enc = tokenizer([w for w, _ in sentences], is_split_into_words=True, truncation=True, max_length=max_length,
                    padding=True, return_tensors="pt")
    target = torch.full(enc["input_ids"].shape, -100, dtype=torch.long)
    # per sentence: the token index of each word's first piece (None if truncated away)
    first: list[list[int | None]] = []
    for k, (_, tags) in enumerate(sentences):
        seen: set[int] = set()
        pos: list[int | None] = [None] * len(tags)
        for t, w in enumerate(enc.word_ids(k)):
            if w is not None and w not in seen:
                seen.add(w)
                pos[w] = t
                target[k, t] = labels.get(tags[w], -100)
        first.append(pos)
    return {"inputs": {k: v for k, v in enc.items()}, "labels": target, "first": first}


def finetune_and_evaluate(model_path: str, tokenizer: PreTrainedTokenizerBase, train: list[Sentence],
                          tests: dict[str, list[Sentence]], args: FinetuneArguments, metric: str, device: str = "cpu",
                          precision: str = "fp32") -> dict[str, Any]:
    tagset = sorted({t for _, tags in train for t in tags})
    labels = {t: i for i, t in enumerate(tagset)}
    torch.manual_seed(args.seed)
    model = AutoModelForTokenClassification.from_pretrained(model_path, num_labels=len(tagset)).to(device)
    check_length(model, args.max_length, model_path)

    def batches(order: list[int]) -> Iterator[TokenBatch]:
        for s in range(0, len(order), args.batch_size):
            b = encode(tokenizer, [train[i] for i in order[s:s + args.batch_size]], labels, args.max_length)
            yield {k: v.to(device) for k, v in b["inputs"].items()}, b["labels"].to(device)

    def loss_fn(m: nn.Module, batch: TokenBatch) -> torch.Tensor:
        inputs, target = batch
        logits = m(**inputs).logits.float()
        return F.cross_entropy(logits.flatten(0, 1), target.flatten(), ignore_index=-100)

    stats = finetune.train(model, len(train), batches, loss_fn, args, device, precision)
    counts_of = entity_counts if metric == "entity_f1" else word_counts
    per: dict[str, float] = {}
    items: dict[str, list[list[int]]] = {}
    with torch.no_grad():
        for lang, sents in tests.items():
            pred = []
            for s in range(0, len(sents), args.eval_batch_size):
                part = sents[s:s + args.eval_batch_size]
                b = encode(tokenizer, part, labels, args.max_length)
                arg = model(**{k: v.to(device) for k, v in b["inputs"].items()}).logits.argmax(-1).cpu()
                for k, pos in enumerate(b["first"]):
                    pred.append([tagset[int(arg[k, t])] if t is not None else "<truncated>" for t in pos])
            counts = [counts_of(tags, p) for (_, tags), p in zip(sents, pred)]
            items[lang] = [list(c) for c in counts]
            per[lang] = ratio(counts)
    # test tags the training set never has: the model cannot predict them, so they are scored wrong; counted here
    unseen = {lang: dict(sorted(Counter(t for _, tags in sents for t in tags if t not in labels).items()))
              for lang, sents in tests.items()}
    # items: per sentence (numerator, denominator) of the metric, so the claims' bootstrap can resample sentences
    return {"per_language": per, "main_score": float(np.mean(list(per.values()))), "metric": metric, **stats,
            "tagset": tagset, "n_train": len(train), "items": items,
            "unseen_test_tags": {lang: c for lang, c in unseen.items() if c}}


@register_task_type("token-classification")
def run_token_classification(task: Task, ctx: EvalContext) -> TaskResult:
    p = task.params_for(ctx.scale)
    entry = finetune.dataset(ctx.manifest, "token_classification", p["dataset"])
    train = read_conll(entry["train"])
    tests = {lang: read_conll(path) for lang, path in sorted(entry["test"].items())}
    model_dir = ctx.embedder.hf_model_dir()
    scores = finetune_and_evaluate(str(model_dir), load_tokenizer(model_dir), train, tests,
                                   finetune.arguments(p, ctx.seed), p["metric"], finetune.device(), ctx.precision)
    return TaskResult(scores, sorted(tests), [Path(entry["train"]), *map(Path, entry["test"].values())])
