"""BLEU for the NMT tables (HICTL section 4.2): sacreBLEU on detokenized text, and tokenized BLEU for the tables the
paper scored with ``multi-bleu.perl`` (IWSLT'14 En<->De and WMT).

* :func:`sacre_bleu` -- ``sacrebleu.corpus_bleu`` on detokenized hypotheses and references (13a tokenization
  inside, exponential smoothing off: sacreBLEU's defaults); its signature is printed under every table.
* :func:`tokenized_bleu` -- multi-bleu.perl's convention: BLEU-4 on whitespace tokens of already tokenized text,
  no smoothing (0 when a precision is 0), closest reference length for the brevity penalty; the text is tokenized
  with sacreBLEU's 13a tokenizer (Moses' tokenizer is not a dependency here), so the numbers follow the convention,
  not the paper's exact tokenization.
* :func:`read_generate` -- ``fairseq-generate``'s hypotheses (``H-`` lines) back to text: token strings to the
  tokenizer's ids, target-language tags dropped, then the tokenizer's own decoding (de-piece). They are scored
  against the raw reference files (lower-cased on both sides when the tokenizer lower-cases, as MiniLM's does).
"""
from __future__ import annotations

import re
from pathlib import Path

from sacrebleu.metrics import BLEU
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

_TAG = re.compile(r"^<2[^>]+>$")


def sacre_bleu(hypotheses: list[str], references: list[str], lowercase: bool = False) -> dict:
    metric = BLEU(lowercase=lowercase)
    result = metric.corpus_score(hypotheses, [references])
    return {"bleu": result.score, "signature": str(metric.get_signature()), "precisions": result.precisions,
            "bp": result.bp}


def sentence_statistics(hypotheses: list[str], references: list[str], lowercase: bool = False) -> list[list[int]]:
    """Per sentence, sacreBLEU's sufficient statistics [hyp length, ref length, matches 1-4, totals 1-4]: summed
    over any resample of the sentences they give that resample's corpus BLEU (:func:`bleu_from_statistics`)."""
    metric = BLEU(lowercase=lowercase)
    out = []
    for h, r in zip(hypotheses, references):
        res = metric.corpus_score([h], [[r]])
        out.append([res.sys_len, res.ref_len, *res.counts, *res.totals])
    return out


def bleu_from_statistics(stats) -> float:
    """Corpus BLEU (sacreBLEU's, exponential smoothing) from summed per-sentence statistics."""
    import numpy as np

    s = np.asarray(stats).sum(0)
    return BLEU.compute_bleu(s[2:6].tolist(), s[6:10].tolist(), int(s[0]), int(s[1]), smooth_method="exp").score


def tokenized_bleu(hypotheses: list[str], references: list[str], lowercase: bool = False) -> dict:
    tok = Tokenizer13a()

    def prep(text: str) -> str:
        return tok(text.lower() if lowercase else text)

    metric = BLEU(tokenize="none", smooth_method="none", force=True)
    result = metric.corpus_score([prep(h) for h in hypotheses], [[prep(r) for r in references]])
    return {"bleu": result.score, "signature": f"multi-bleu convention: 13a-tokenized, {metric.get_signature()}",
            "precisions": result.precisions, "bp": result.bp}


def read_generate(path: str | Path, tokenizer, indices: dict[str, int], n: int) -> list[str]:
    """The ``n`` hypotheses of a fairseq-generate log in sentence order, detokenized with ``tokenizer``
    (``indices``: the fairseq dictionary's symbol -> id map, i.e. the tokenizer's ids plus the tags)."""
    hyps: dict[int, str] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.startswith("H-"):
            parts = line.split("\t")
            tokens = parts[2] if len(parts) > 2 else ""
            ids = [indices[t] for t in tokens.split() if not _TAG.match(t) and t in indices]
            hyps[int(parts[0][2:])] = tokenizer.decode(ids, skip_special_tokens=True).strip()
    if sorted(hyps) != list(range(n)):
        raise ValueError(f"{path}: hypotheses for {len(hyps)} of the {n} test sentences")
    return [hyps[i] for i in range(n)]
