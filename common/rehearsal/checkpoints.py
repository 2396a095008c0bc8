"""Tiny random checkpoints in the Hub's format for the rehearsal mirror: for a pinned model
(:mod:`common.models.hub`), the same files (``config.json``, weights as ``model.safetensors`` or
``pytorch_model.bin``, the tokenizer's own files) with the same model type and tokenizer kind -- WordPiece
``vocab.txt`` for BERT-type models (cased or not, as the model), a SentencePiece model for XLM-R
(``sentencepiece.bpe.model``) and mT5 (``spiece.model``) -- at widths of 32, two layers and the real position
tables (512 / 514), so the paper's sequence lengths fit. The vocabularies are learned on the phrasebook's text."""
from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path

import torch

from common.models.hub import HubModel
from common.rehearsal import phrasebook as pb

LANGUAGES = ("en", "de", "fr", "es", "zh", "ar", "ru", "tr", "cs", "ro", "hi", "ne")
WIDTH = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64}


def family(name: str) -> str:
    n = name.lower()
    if "mt5" in n or "/t5" in n:
        return "mt5"
    if "xlm-roberta" in n:
        return "xlm-roberta"
    return "bert"  # BERT and the BERT-architecture Chinese RoBERTa (hfl/chinese-roberta-wwm-ext)


def _text() -> list[str]:
    return [s for lang in LANGUAGES for s in pb.sentences(lang, "checkpoint-vocabulary", 150)]


def _wordpiece(folder: Path, lower: bool) -> int:
    text = [s.lower() for s in _text()] if lower else _text()
    words = Counter(w for s in text for w in s.replace(".", " .").split())
    chars = sorted({c for s in text for c in s if not c.isspace()})
    vocab = ["[PAD]", *(f"[unused{i}]" for i in range(4)), "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars,
             *(f"##{c}" for c in chars), *(w for w, _ in words.most_common(400) if w not in chars)]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    return len(vocab)


def _sentencepiece(folder: Path, file: str) -> None:
    import sentencepiece as spm

    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(_text()) + "\n", encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(folder / "sp"), vocab_size=600,
                                   model_type="unigram", character_coverage=1.0, unk_id=0, bos_id=-1, eos_id=-1,
                                   pad_id=-1, minloglevel=2)
    (folder / "sp.model").rename(folder / file)
    for leftover in ("sp.vocab", "corpus.txt"):
        (folder / leftover).unlink()


def _build(model: HubModel, folder: Path) -> None:
    from transformers import (
        AutoTokenizer,
        BertConfig,
        BertForMaskedLM,
        MT5Config,
        MT5ForConditionalGeneration,
        XLMRobertaConfig,
        XLMRobertaForMaskedLM,
    )

    kind = family(model.name)
    torch.manual_seed(0)
    if kind == "bert":
        lower = "uncased" in model.name.lower()
        _wordpiece(folder, lower)
        (folder / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": lower, "model_max_length": 512}))
        BertConfig(vocab_size=100000, max_position_embeddings=512, **WIDTH).save_pretrained(folder)
        tok = AutoTokenizer.from_pretrained(folder)
        net = BertForMaskedLM(BertConfig(vocab_size=len(tok), max_position_embeddings=512, **WIDTH))
    elif kind == "xlm-roberta":
        _sentencepiece(folder, "sentencepiece.bpe.model")
        XLMRobertaConfig(vocab_size=100000, max_position_embeddings=514, **WIDTH).save_pretrained(folder)
        tok = AutoTokenizer.from_pretrained(folder)
        net = XLMRobertaForMaskedLM(XLMRobertaConfig(vocab_size=len(tok), max_position_embeddings=514,
                                                     pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
                                                     eos_token_id=tok.eos_token_id, **WIDTH))
    else:
        _sentencepiece(folder, "spiece.model")
        shape = {"d_model": 32, "d_ff": 64, "d_kv": 16, "num_layers": 2, "num_decoder_layers": 2, "num_heads": 2}
        MT5Config(vocab_size=100000, **shape).save_pretrained(folder)
        tok = AutoTokenizer.from_pretrained(folder)
        ids = {"pad_token_id": tok.pad_token_id, "eos_token_id": tok.eos_token_id,
               "decoder_start_token_id": tok.pad_token_id}
        net = MT5ForConditionalGeneration(MT5Config(vocab_size=len(tok), **ids, **shape))
    tok.save_pretrained(folder)
    net.save_pretrained(folder)  # config.json (with the tokenizer's vocabulary size) and model.safetensors
    torch.save(net.state_dict(), folder / "pytorch_model.bin")  # the older repositories' weights file
    specials = {k: str(v) for k, v in tok.special_tokens_map.items() if isinstance(v, str)}
    (folder / "special_tokens_map.json").write_text(json.dumps(specials))
    (folder / "added_tokens.json").write_text("{}")


def tiny_checkpoint(model: HubModel) -> dict[str, bytes]:
    """File name -> bytes of every file ``model`` pins."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _build(model, folder)
        missing = [f for f in model.files if not (folder / f).is_file()]
        if missing:
            raise FileNotFoundError(f"{model.name}: the rehearsal cannot make the pinned files {missing}")
        return {f: (folder / f).read_bytes() for f in model.files}
