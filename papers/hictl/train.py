"""HICTL pre-training (section 3.1, appendix B): one run (``variants``), one encoder initialisation, one seed.

``python -m papers.hictl.train --help`` lists the arguments (:mod:`common.training.cli`). Writes ``model/``: the
encoder (HF format with its tokenizer, so the NMT fine-tuning of section 3.2 can load it) as a
``sentence-encoder`` folder with CLS pooling and the projection f (its ``2_Dense`` module, then ``Normalize``),
i.e. the representation r(x) = f(g(M(x))) the sentence-level loss trains; runs without that loss save g(M(x)) alone
(their f was never trained: :meth:`papers.hictl.model.HICTL.saved_projection`).

Training examples: every parallel pair of the corpus ``(x, y, "parallel")`` plus monolingual sentences
``(x, None, "mono")`` -- the corpus's ``monolingual`` files when it has them (CC-100 at paper scale), else both
sides of the training pairs (the small scales) -- sampled so that they are ``mono_fraction`` of the examples (the
paper does not state its mix). "w/o MT data" trains on as many monolingual sentences alone.
"""
from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from common.data.loaders import read_tsv_pairs
from common.data.stream import Concat, IndexedLines, Mapped, Picked, TsvPairs, tagged
from common.models.embedder import save_sentence_encoder
from common.models.encoder import build_mlm_model, encoder_spec
from common.models.tokenizer import load_tokenizer
from common.training.cli import Built, RunArguments, main
from papers.hictl import variants
from papers.hictl.data import MONO, PARALLEL, HICTLCollator
from papers.hictl.model import HICTL


def monolingual_pool(manifest: dict) -> Sequence[str]:
    """The monolingual sentences (their non-blank lines, read by position: common/data/stream.py); a corpus without
    monolingual files (the smoke and mini scales) pools the distinct sentences of its pairs, in memory."""
    if manifest.get("monolingual"):
        return Concat([IndexedLines(path, skip_blank=True) for _, path in sorted(manifest["monolingual"].items())])
    return list(dict.fromkeys(s for _, path in sorted(manifest["train"].items())
                              for pair in read_tsv_pairs(path) for s in pair))


def load_examples(manifest: dict, mono_fraction: float, parallel: bool, seed: int = 1) -> Sequence[tuple]:
    """Parallel pairs and monolingual sentences in the configured mix (a fixed sample: the data seed, not the run's).
    The sample is drawn over positions (``random.sample`` and ``choice`` depend on the pool's size only), and the
    pairs and sentences are read when a batch asks for them."""
    pairs = Concat([tagged(TsvPairs(path), PARALLEL) for _, path in sorted(manifest["train"].items())])
    n_mono = round(len(pairs) * mono_fraction / (1 - mono_fraction)) if mono_fraction < 1 else len(pairs)
    total = len(pairs) + n_mono
    pool = monolingual_pool(manifest)
    rng = random.Random(seed)
    want = n_mono if parallel else total
    positions = range(len(pool))
    chosen = rng.sample(positions, want) if want <= len(pool) else [rng.choice(positions) for _ in range(want)]
    mono = Mapped(Picked(pool, np.asarray(chosen, dtype=np.int64)), lambda s: (s, None, MONO))
    return Concat([pairs, mono] if parallel else [mono])


class HICTLRecipe:
    paper = "hictl"

    def examples(self, cfg: dict, run: RunArguments, manifest: dict) -> Sequence:
        v = variants.resolve(run.method)
        return load_examples(manifest, cfg["hictl"]["mono_fraction"], v["parallel"])

    def build(self, cfg: dict, run: RunArguments, manifest: dict, examples: Sequence) -> Built:
        v, h = variants.resolve(run.method), cfg["hictl"]
        tokenizer = load_tokenizer(run.tokenizer)
        mlm = build_mlm_model(encoder_spec(cfg["encoders"][run.init], run.tokenizer), vocab_size=len(tokenizer))
        model = HICTL(mlm, tokenizer.all_special_ids, sentence=v["sentence"], word=v["word"],
                      hard_negatives=v["hard_negatives"], temperature=h["temperature"], zeta=h["zeta"],
                      window=h["window"], word_negatives=h["word_negatives"], pooling=cfg["pooling"])
        collate = HICTLCollator(tokenizer, cfg["training"]["max_length"], h["mask_bilingual"], h["mask_monolingual"],
                                pad_scored_to=cfg["training"].get("pad_scored_to", 1),
                                word_negatives=h["word_negatives"] if v["word"] else None)

        def save(trained: HICTL, out: Path) -> None:
            # the sentence-level CTL trains on cosines of f(g(M(x))): its runs save a Normalize module after f
            save_sentence_encoder(trained.encoder, tokenizer, out, cfg["eval"]["max_length"],
                                  projection=trained.saved_projection(), normalize=v["sentence"] and v["train"])

        # Table 9 trains its base and large models with different learning rates and Adam betas
        overrides = {**h.get("training_by_init", {}).get(run.init, {}), **({} if v["train"] else {"max_steps": 0})}
        return Built(model, collate, save, v, overrides)


if __name__ == "__main__":
    main(HICTLRecipe())
