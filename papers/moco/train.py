"""MoCo-BERT training (section 2, section 3.1, appendix A-B): one run, one seed.

``python -m papers.moco.train --help`` lists the arguments (:mod:`common.training.cli`); ``--method``
is a run name of :mod:`papers.moco.variants`. Writes ``model/`` (a ``dual-encoder`` embedder folder:
``xx/`` and ``en/``, each an HF + sentence-transformers folder), ``metrics.jsonl``,
``training_args.json`` (the resolved config) and ``checkpoints/`` (resumable: queues and momentum
encoders are module state).

Tokenizers: ``--tokenizer`` holds ``xx/`` and ``en/`` (one per language, the paper's setting) or is
one tokenizer for both sides (the leaderboard, where every method shares one initial encoder).
Encoders: ``encoders.<init>`` is either ``{xx: spec, en: spec}`` or one spec used for both sides.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from common.data.loaders import read_xnli_tsv
from common.data.stream import Concat, TsvPairs
from common.models.embedder import save_dual_encoder
from common.models.encoder import EncoderSpec, SentenceEncoder, build_encoder, encoder_spec
from common.models.tokenizer import load_tokenizer
from common.training.cli import Built, RunArguments, main
from papers.moco import variants
from papers.moco.data import MocoCollator
from papers.moco.model import DualMomentumContrast
from papers.moco.nli import NLIHead


def load_pairs(manifest: dict, one_language: bool) -> Sequence[tuple[str, str]]:
    """(non-English, English) training pairs, read by position (common/data/stream.py); the paper trains one
    language pair (section 3.1)."""
    if one_language and len(manifest["train"]) != 1:
        raise ValueError(f"MoCo-BERT trains one language pair; the corpus has {sorted(manifest['train'])}")
    return Concat([TsvPairs(path) for _, path in sorted(manifest["train"].items())])


def tokenizers(folder: str | Path):
    folder = Path(folder)
    if (folder / "xx").is_dir():
        return load_tokenizer(folder / "xx"), load_tokenizer(folder / "en")
    tok = load_tokenizer(folder)
    return tok, tok


def encoder_specs(cfg: dict, init: str, tok_xx, tok_en) -> tuple[EncoderSpec, EncoderSpec]:
    """Each side's encoder (the tokenizers' folders hold a side's grown model when its vocabulary is extended)."""
    e = cfg["encoders"][init]
    if "xx" in e:
        return encoder_spec(e["xx"], tok_xx.name_or_path), encoder_spec(e["en"], tok_en.name_or_path)
    return encoder_spec(e, tok_xx.name_or_path), encoder_spec(e, tok_en.name_or_path)


def build_model(cfg: dict, s: dict, specs: tuple[EncoderSpec, EncoderSpec], tok_xx, tok_en,
                seed: int) -> DualMomentumContrast:
    """The model of run settings ``s`` (``variants.resolve``)."""
    enc_xx = SentenceEncoder(build_encoder(specs[0], len(tok_xx)), s["pooling"])
    enc_en = SentenceEncoder(build_encoder(specs[1], len(tok_en)), s["pooling"])
    m = cfg["moco"]
    head = NLIHead(enc_en.backbone.config.hidden_size, m["nli_hidden"], m["nli_dropout"]) if s["nli"] else None
    return DualMomentumContrast(enc_xx, enc_en, queue_size=s["queue_size"], temperature=s["temperature"],
                                momentum=m["momentum"], negatives=s["negatives"], momentum_mode=s["momentum_mode"],
                                nli_head=head, nli_weight=m["nli_weight"], seed=seed)


class MocoRecipe:
    paper = "moco"

    def examples(self, cfg: dict, run: RunArguments, manifest: dict) -> Sequence:
        return load_pairs(manifest, one_language=run.experiment == self.paper)

    def build(self, cfg: dict, run: RunArguments, manifest: dict, examples: Sequence) -> Built:
        s = variants.resolve(run.method, cfg)
        tok_xx, tok_en = tokenizers(run.tokenizer)
        model = build_model(cfg, s, encoder_specs(cfg, run.init, tok_xx, tok_en), tok_xx, tok_en, run.seed)
        nli = read_xnli_tsv(manifest["nli_train"]) if s["nli"] else None
        collate = MocoCollator(tok_xx, tok_en, cfg["training"]["max_length"], nli, cfg["moco"]["nli_batch_size"])

        def save(trained: DualMomentumContrast, out: Path) -> None:
            # the momentum contrast compares normalised vectors (section 2): both sides save a Normalize module
            save_dual_encoder({"xx": (trained.encoder_x, tok_xx), "en": (trained.encoder_y, tok_en)}, out,
                              cfg["eval"]["max_length"], normalize=s["max_steps"] > 0)

        overrides = {"max_steps": s["max_steps"], "global_batch_size": s["global_batch_size"]}
        return Built(model, collate, save, {**s, "languages": sorted(manifest["train"])}, overrides)


if __name__ == "__main__":
    main(MocoRecipe())
