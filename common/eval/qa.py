"""Extractive question answering, XTREME's zero-shot protocol (Hu et al. 2020; HICTL section 4.2, Table 1):
fine-tune the whole encoder with a span head (start and end logits per token) on English SQuAD-format data, then
predict answer spans in every test language; F1 / EM x 100 with the official SQuAD v1.1 answer normalisation
(lower case, no punctuation, no articles, single spaces; token F1 over whitespace tokens; max over the gold
answers). MLQA's own script normalises punctuation per Unicode category and scores Chinese by character; we use
SQuAD's for every set (say so in tables).

Long contexts are split into windows of ``max_length`` tokens with ``doc_stride`` tokens of overlap (BERT's
recipe); a training window whose context part does not contain the whole answer points at the first token (the
"no answer" position). A prediction is the highest start + end logit over every window and every span of at most
``max_answer_length`` tokens inside the context, mapped back to characters through the tokenizer's offsets.

Data (SQuAD v1.1 JSON): at paper scale SQuAD v1.1 train (XQuAD, MLQA) or TyDiQA-GoldP's English train, and the
XQuAD / MLQA / TyDiQA-GoldP test sets (download rules in :mod:`common.data.download`); at mini scale a stand-in
from XQuAD-R (:mod:`common.data.xquad_qa`); at smoke scale the synthetic generator's QA set.
"""
from __future__ import annotations

import collections
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from transformers import AutoModelForQuestionAnswering, PreTrainedTokenizerBase

from common.data.squad import QAExample, read_squad
from common.eval import finetune
from common.eval.answers import normalize_answer
from common.eval.finetune import FinetuneArguments, check_length
from common.eval.task_types import EvalContext, TaskResult, register_task_type
from common.eval.tasks import Task
from common.models.tokenizer import load_tokenizer

QABatch = tuple[dict[str, torch.Tensor], torch.Tensor, torch.Tensor]  # model inputs, start and end positions


def f1_score(prediction: str, truth: str) -> float:
    pred, gold = normalize_answer(prediction).split(), normalize_answer(truth).split()
    common = collections.Counter(pred) & collections.Counter(gold)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def exact_match(prediction: str, truth: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(truth))


def score(predictions: dict[str, str], examples: list[QAExample]) -> dict[str, Any]:
    """F1 and EM x 100 (max over each question's gold answers), averaged over the questions."""
    f1 = [max(f1_score(predictions.get(e.id, ""), a) for a in e.answers) for e in examples]
    em = [max(exact_match(predictions.get(e.id, ""), a) for a in e.answers) for e in examples]
    return {"f1": 100 * float(np.mean(f1)), "exact_match": 100 * float(np.mean(em)), "n": len(examples),
            "items_f1": f1}


def features(tokenizer: PreTrainedTokenizerBase, examples: list[QAExample], max_length: int, doc_stride: int,
             training: bool) -> dict[str, Any]:
    """Tokenized windows: input tensors, the example of each window, token offsets (None outside the context)
    and, for training, start / end token positions."""
    enc = tokenizer([e.question for e in examples], [e.context for e in examples], truncation="only_second",
                    max_length=max_length, stride=doc_stride, return_overflowing_tokens=True,
                    return_offsets_mapping=True, padding="max_length")
    owner = enc["overflow_to_sample_mapping"]
    offsets: list[list[tuple[int, int] | None]] = []
    starts: list[int] = []
    ends: list[int] = []
    for w in range(len(enc["input_ids"])):
        seq = enc.sequence_ids(w)
        window = enc["offset_mapping"][w]  # every token's (start, end) characters
        offsets.append([o if s == 1 else None for o, s in zip(window, seq)])
        if training:
            e = examples[owner[w]]
            a0, a1 = e.answer_start, e.answer_start + len(e.answers[0])
            ctx = [i for i, s in enumerate(seq) if s == 1]
            first, last = ctx[0], ctx[-1]
            if not (window[first][0] <= a0 and window[last][1] >= a1):
                starts.append(0)
                ends.append(0)
                continue
            st = first
            while st <= last and window[st][1] <= a0:
                st += 1
            en = last
            while en >= first and window[en][0] >= a1:
                en -= 1
            starts.append(st)
            ends.append(en)
    keep = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc]
    out = {"inputs": {k: torch.tensor(enc[k]) for k in keep}, "owner": list(owner), "offsets": offsets}
    if training:
        out["start"], out["end"] = torch.tensor(starts), torch.tensor(ends)
    return out


def predict(model: nn.Module, tokenizer: PreTrainedTokenizerBase, examples: list[QAExample], args: FinetuneArguments,
            doc_stride: int, max_answer_length: int, device: str, n_best: int = 20) -> dict[str, str]:
    feats = features(tokenizer, examples, args.max_length, doc_stride, training=False)
    best: dict[int, tuple[float, str]] = {}
    with torch.no_grad():
        n = len(feats["owner"])
        for s in range(0, n, args.eval_batch_size):
            batch = {k: v[s:s + args.eval_batch_size].to(device) for k, v in feats["inputs"].items()}
            out = model(**batch)
            for j, (st, en) in enumerate(zip(out.start_logits.float().cpu().numpy(),
                                             out.end_logits.float().cpu().numpy())):
                w = s + j
                ex, offs = feats["owner"][w], feats["offsets"][w]
                for a in np.argsort(st)[::-1][:n_best]:
                    for b in np.argsort(en)[::-1][:n_best]:
                        if offs[a] is None or offs[b] is None or b < a or b - a + 1 > max_answer_length:
                            continue
                        value = float(st[a] + en[b])
                        if ex not in best or value > best[ex][0]:
                            best[ex] = (value, examples[ex].context[offs[a][0]:offs[b][1]])
    return {e.id: best.get(i, (0.0, ""))[1] for i, e in enumerate(examples)}


def finetune_and_evaluate(model_path: str, tokenizer: PreTrainedTokenizerBase, train: list[QAExample],
                          tests: dict[str, list[QAExample]], args: FinetuneArguments, doc_stride: int = 128,
                          max_answer_length: int = 30, device: str = "cpu", precision: str = "fp32") -> dict[str, Any]:
    torch.manual_seed(args.seed)
    model = AutoModelForQuestionAnswering.from_pretrained(model_path).to(device)
    check_length(model, args.max_length, model_path)
    feats = features(tokenizer, train, args.max_length, doc_stride, training=True)

    def batches(order: list[int]) -> Iterator[QABatch]:
        for s in range(0, len(order), args.batch_size):
            idx = torch.tensor(order[s:s + args.batch_size])
            yield ({k: v[idx].to(device) for k, v in feats["inputs"].items()},
                   feats["start"][idx].to(device), feats["end"][idx].to(device))

    def loss_fn(m: nn.Module, batch: QABatch) -> torch.Tensor:
        inputs, start, end = batch
        out = m(**inputs)
        return (F.cross_entropy(out.start_logits.float(), start) + F.cross_entropy(out.end_logits.float(), end)) / 2

    stats = finetune.train(model, len(feats["owner"]), batches, loss_fn, args, device, precision)
    per = {}
    for lang, examples in tests.items():
        per[lang] = score(predict(model, tokenizer, examples, args, doc_stride, max_answer_length, device), examples)
    f1 = float(np.mean([p["f1"] for p in per.values()]))
    em = float(np.mean([p["exact_match"] for p in per.values()]))
    return {"per_language": per, "f1": f1, "exact_match": em, "main_score": f1, **stats, "n_train": len(train),
            "n_train_windows": len(feats["owner"])}


@register_task_type("qa")
def run_qa(task: Task, ctx: EvalContext) -> TaskResult:
    p = task.params_for(ctx.scale)
    entry = finetune.dataset(ctx.manifest, "qa", p["dataset"])
    files = finetune.training_files(entry, p)
    train = [e for f in files for e in read_squad(f, unique_ids=False)]
    tests = {lang: read_squad(path) for lang, path in sorted(entry["test"].items())}
    model_dir = ctx.embedder.hf_model_dir()
    scores = finetune_and_evaluate(str(model_dir), load_tokenizer(model_dir), train, tests,
                                   finetune.arguments(p, ctx.seed), p["doc_stride"], p["max_answer_length"],
                                   finetune.device(), ctx.precision)
    scores["data"] = entry.get("description", "")
    return TaskResult(scores, sorted(tests), [*map(Path, files), *map(Path, entry["test"].values())])
