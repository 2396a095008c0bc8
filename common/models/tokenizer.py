"""WordPiece tokenizers trained with HF ``tokenizers`` for from-scratch models.

The trained tokenizer is saved as a ``BertTokenizerFast`` so ``AutoTokenizer.from_pretrained``
loads it like any Hub tokenizer; pretrained models use their own Hub tokenizer instead.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
from transformers import AutoTokenizer, BertTokenizerFast, PreTrainedTokenizerBase

log = logging.getLogger(__name__)
SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _normalizer() -> normalizers.Normalizer:
    return normalizers.BertNormalizer(lowercase=True, strip_accents=False, handle_chinese_chars=True)


def _fresh_tokenizer(model: models.Model) -> Tokenizer:
    tok = Tokenizer(model)
    tok.normalizer = _normalizer()
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    return tok


def train_wordpiece(sentences: Iterable[str], vocab_size: int, out_dir: str | Path,
                    min_frequency: int = 2) -> PreTrainedTokenizerBase:
    """Train a lower-cased WordPiece vocabulary (BERT's normalizer splits CJK characters).

    The result is deterministic. HF's trainer is not: it gives the continuation pieces
    ("##a") ids in hash-map order as it meets them, and ids break ties between merges of
    equal count, so two runs on the same data learned different vocabularies near the size
    limit (measured: 1 run in 4 on the smoke corpus). Every character and its "##" form are
    therefore given fixed ids up front (passed as leading tokens, sorted), and afterwards
    ids are re-assigned canonically (special tokens, then sorted pieces). A character gets its
    "##" form only if it occurs inside a word: the normalizer isolates CJK characters, so a
    "##" form of one could never be used (on the mini corpus 611 of 4,494 characters occur
    inside words; the other "##" forms were a quarter of the vocabulary and of the softmax of
    a from-scratch decoder).
    """
    sentences = list(sentences)
    norm, words = _normalizer(), pre_tokenizers.BertPreTokenizer()
    chars: set[str] = set()
    inner: set[str] = set()
    for s in sentences:
        for word, _ in words.pre_tokenize_str(norm.normalize_str(s)):
            chars.update(word)
            inner.update(word[1:])
    fixed = sorted(chars) + [f"##{c}" for c in sorted(inner)]
    tok = _fresh_tokenizer(models.WordPiece(unk_token="[UNK]"))
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size + len(fixed), min_frequency=min_frequency,
                                        special_tokens=SPECIAL_TOKENS + fixed, show_progress=False)
    tok.train_from_iterator(sentences, trainer=trainer)
    learned = tok.get_vocab()
    ordered = SPECIAL_TOKENS + sorted(t for t in learned if t not in SPECIAL_TOKENS)
    fast = save_wordpiece(ordered, out_dir)
    log.info("trained WordPiece tokenizer: %d tokens -> %s", fast.vocab_size, out_dir)
    return AutoTokenizer.from_pretrained(out_dir)


def save_wordpiece(vocabulary: list[str], out_dir: str | Path, **fast_kwargs: Any) -> BertTokenizerFast:
    """A lower-casing BERT WordPiece tokenizer over ``vocabulary`` (ids in its order; the special tokens among
    them), saved to ``out_dir`` as a ``BertTokenizerFast`` (``fast_kwargs``: e.g. ``model_input_names``)."""
    tok = _fresh_tokenizer(models.WordPiece(vocab={t: i for i, t in enumerate(vocabulary)}, unk_token="[UNK]"))
    fast = BertTokenizerFast(tokenizer_object=tok, do_lower_case=True, tokenize_chinese_chars=True,
                             strip_accents=False, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]",
                             sep_token="[SEP]", mask_token="[MASK]", **fast_kwargs)
    # BertTokenizerFast re-installs the [CLS] ... [SEP] post-processor on save.
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    fast.save_pretrained(out_dir)
    return fast


def load_tokenizer(name_or_path: str | Path) -> PreTrainedTokenizerBase:
    return AutoTokenizer.from_pretrained(str(name_or_path))


def main(argv: list[str] | None = None) -> None:
    """Train a WordPiece vocabulary on every sentence of a corpus manifest's training pairs,
    or save a pretrained model's tokenizer (``--pretrained``)."""
    import argparse

    from common.data.loaders import read_tsv_pairs
    from common.data.manifest import load_manifest

    p = argparse.ArgumentParser(description=main.__doc__)
    p.add_argument("--corpus", help="corpus manifest.json")
    p.add_argument("--vocab-size", type=int, default=8000)
    p.add_argument("--min-frequency", type=int, default=2)
    p.add_argument("--pretrained", default=None, help="save this model's tokenizer instead of training one")
    p.add_argument("--extend-vocabulary", type=int, default=0, metavar="N",
                   help="with --pretrained: add up to N pieces learned on the corpus and save the grown model beside "
                        "the tokenizer (common/models/vocabulary.py)")
    p.add_argument("--side", choices=("both", "xx", "en"), default="both",
                   help="train on both sides of the pairs, the non-English side or the English side")
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    manifest = load_manifest(a.corpus) if a.corpus else None
    sides = {"both": (0, 1), "xx": (0,), "en": (1,)}[a.side]
    if a.pretrained:
        from common.models.encoder import resolve_pretrained

        if not a.extend_vocabulary:
            load_tokenizer(resolve_pretrained(a.pretrained)).save_pretrained(a.out)
            return
    if manifest is None:
        p.error("--corpus is required to train a vocabulary or to extend one")
    if a.pretrained:
        from common.models.vocabulary import extend_pretrained

        pairs = {lang: read_tsv_pairs(path) for lang, path in manifest["train"].items()}
        sentences = [pair[i] for ps in pairs.values() for pair in ps for i in sides]
        sample = {lang: [p[0] for p in ps[:1000]] for lang, ps in pairs.items()}  # pieces per word, in-sample
        extend_pretrained(resolve_pretrained(a.pretrained), sentences, a.out, a.extend_vocabulary, sample)
        return
    sentences = [pair[i] for path in manifest["train"].values() for pair in read_tsv_pairs(path) for i in sides]
    train_wordpiece(sentences, a.vocab_size, a.out, a.min_frequency)


if __name__ == "__main__":
    main()
