"""DAP pre-training (section 3.3, 4.2): one method, one encoder initialisation, one seed.

``python -m papers.dap.train --help`` lists the arguments (:mod:`common.training.cli`). Runs under
a plain ``python`` (one process) or ``deepspeed``/``torchrun``/``srun`` (several). Writes ``model/``
(a ``sentence-encoder`` embedder folder, also loadable by ``AutoModel`` and sentence-transformers),
``metrics.jsonl``, ``training_args.json`` (the resolved config) and ``checkpoints/`` (resumable).
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from common.data.stream import Concat, Mapped, TsvPairs, tagged, without_sources
from common.models.embedder import save_sentence_encoder
from common.models.encoder import build_mlm_model, encoder_spec
from common.models.tokenizer import load_tokenizer
from common.training.cli import Built, RunArguments, main
from papers.dap import variants
from papers.dap.data import DAPCollator
from papers.dap.model import DAPModel


def language_ids(manifest: dict) -> dict[str, int]:
    """English is 0, the training languages 1.. in sorted order (RTL's language embeddings, section 5.1)."""
    return {"en": 0} | {lang: i + 1 for i, lang in enumerate(sorted(manifest["train"]))}


def load_examples(manifest: dict, exclude_sources: Sequence[str] = ()) -> Sequence[tuple[str, str, int]]:
    """(non-English, English, language id) for every training pair, read by position (common/data/stream.py);
    without the pairs of ``exclude_sources`` (the manifest's ``train_sources`` says which lines they are)."""
    ids = language_ids(manifest)
    spans = manifest.get("train_sources") or {}
    known = {source for runs in spans.values() for source, _ in runs}
    unknown = set(exclude_sources) - known
    if unknown:
        raise ValueError(f"sources {sorted(unknown)} to leave out are not in the corpus (its train_sources: "
                         f"{sorted(known) or 'not recorded'}; a mini corpus built before they were recorded needs "
                         "its corpus folder deleted and rebuilt)")
    parts: list[Sequence[tuple[str, str, int]]] = []
    for lang, path in sorted(manifest["train"].items()):
        pairs: Sequence[tuple[str, str]] = TsvPairs(path)
        if exclude_sources:
            pairs = without_sources(pairs, spans[lang], exclude_sources, path)
        parts.append(tagged(pairs, ids[lang]))
    return Concat(parts)


def english_vocabulary(tokenizer, english: Sequence[str], max_length: int) -> list[int]:
    """The word pieces of the English training sentences as the collator truncates them (every RTL target of
    xx->en is one of them): the head's vocabulary under ``dap.rtl_vocabulary: english`` (papers/dap/rtl.py)."""
    ids: set[int] = set()
    for i in range(0, len(english), 4096):
        block = [english[j] for j in range(i, min(i + 4096, len(english)))]
        for row in tokenizer(block, truncation=True, max_length=max_length)["input_ids"]:
            ids.update(row)
    return sorted(ids)


def build_model(cfg: dict, method: dict, init: str, tokenizer, num_languages: int,
                rtl_vocabulary: list[int] | None = None) -> DAPModel:
    """The DAP training model of one method (``variants.resolve``) on encoder ``init``."""
    d = cfg["dap"]
    mlm = build_mlm_model(encoder_spec(cfg["encoders"][init], tokenizer.name_or_path), vocab_size=len(tokenizer))
    return DAPModel(mlm, method["objectives"], temperature=d["temperature"], margin=d.get("margin", 0.0),
                    rtl_layers=method["rtl_layers"], direction=method["direction"], rtl_weight=d["rtl_weight"],
                    tlm_weight=d.get("tlm_weight", 1.0), num_languages=num_languages, pooling=cfg["pooling"],
                    rtl_vocabulary=rtl_vocabulary, mask_token_id=tokenizer.mask_token_id)


def collator(cfg: dict, method: dict, tokenizer, rtl_vocabulary: list[int] | None = None) -> DAPCollator:
    return DAPCollator(tokenizer, cfg["training"]["max_length"], method["objectives"], rho=method["rho"],
                       direction=method["direction"], tlm_mask_prob=cfg["dap"].get("tlm_mask_prob", 0.15),
                       pad_scored_to=cfg["training"].get("pad_scored_to", 1), rtl_vocabulary=rtl_vocabulary)


class DAPRecipe:
    paper = "dap"

    def examples(self, cfg: dict, run: RunArguments, manifest: dict) -> Sequence:
        return load_examples(manifest, variants.resolve(run.method, cfg["dap"]).get("exclude_sources", ()))

    def build(self, cfg: dict, run: RunArguments, manifest: dict, examples: Sequence) -> Built:
        method = variants.resolve(run.method, cfg["dap"])
        tokenizer = load_tokenizer(run.tokenizer)
        lang_ids = language_ids(manifest)
        vocab = None  # the whole vocabulary (eq. 6); English only as an option, for xx->en (its targets are English)
        if cfg["dap"].get("rtl_vocabulary", "all") == "english" and "rtl" in method["objectives"] \
                and method["direction"] == "xx2en":
            vocab = english_vocabulary(tokenizer, Mapped(examples, lambda e: e[1]), cfg["training"]["max_length"])
        model = build_model(cfg, method, run.init, tokenizer, num_languages=len(lang_ids), rtl_vocabulary=vocab)

        def save(trained: DAPModel, out: Path) -> None:
            # translation ranking trains on cosines: the saved model normalises (a Normalize module)
            save_sentence_encoder(trained.encoder, tokenizer, out, cfg["eval"]["max_length"],
                                  normalize="tr" in method["objectives"] and method.get("train", True))

        info = {**method, "languages": lang_ids, **({"rtl_vocabulary_size": len(vocab)} if vocab else {})}
        overrides = {} if method.get("train", True) else {"max_steps": 0}  # ``init``: the encoder as it starts
        return Built(model, collator(cfg, method, tokenizer, vocab), save, info, overrides)


if __name__ == "__main__":
    main(DAPRecipe())
