"""A pretrained WordPiece vocabulary extended with pieces learned on the training corpus, and its model's embedding
table grown to match (MiniLM's English vocabulary splits other scripts into unknown or single-character
pieces).

* **pieces**: a WordPiece vocabulary is trained on the corpus with the pretrained tokenizer's own normalizer and
  pre-tokenizer (``train_new_from_iterator``); the pieces the old vocabulary lacks are ranked by how often the new
  tokenizer uses them on the corpus (ties by the piece), and the first ``max_new`` are appended after the old ids,
  which keep their numbers.
* **rows**: each new piece's embedding is the mean of the old embeddings of the pieces the *old* vocabulary splits
  it into (WordPiece's greedy longest match, a continuation piece ``##xy`` split as a word's continuation), the
  initialisation of Gee et al. 2022 ("Fast Vocabulary Transfer for Language Model Compression"); a piece the old
  vocabulary cannot spell at all takes the unknown token's row.
* **saved** as a copy of the pretrained folder with the grown model and tokenizer, so ``AutoModel``,
  ``AutoTokenizer`` and ``SentenceTransformer`` load it like the original (its pooling and modules files are kept).

Only WordPiece (BERT-style) vocabularies are handled: a SentencePiece unigram vocabulary (XLM-R, mT5) covers the
papers' languages already.
"""
from __future__ import annotations

import json
import logging
import shutil
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer
from transformers import AutoModel, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerFast

log = logging.getLogger(__name__)
PREFIX = "##"


def wordpiece_split(piece: str, vocab: Mapping[str, int], unk: str, max_chars: int = 100) -> list[str]:
    """The pieces ``vocab`` spells ``piece`` with, by WordPiece's greedy longest match (a ``##`` piece is spelled as
    a word's continuation: every sub-piece takes the prefix); ``[unk]`` when some part cannot be spelled."""
    continuation = piece.startswith(PREFIX) and piece != PREFIX
    text = piece[len(PREFIX):] if continuation else piece
    if len(text) > max_chars:
        return [unk]
    out, start = [], 0
    while start < len(text):
        for end in range(len(text), start, -1):
            sub = (PREFIX if start > 0 or continuation else "") + text[start:end]
            if sub in vocab:
                out.append(sub)
                start = end
                break
        else:
            return [unk]
    return out


def _wordpiece_json(tokenizer: PreTrainedTokenizerFast) -> dict[str, Any]:
    state: dict[str, Any] = json.loads(tokenizer.backend_tokenizer.to_str())
    if state["model"]["type"] != "WordPiece":
        raise ValueError(f"{tokenizer.name_or_path}: a {state['model']['type']} vocabulary; only WordPiece "
                         "vocabularies are extended")
    return state


def learn_pieces(tokenizer: PreTrainedTokenizerFast, sentences: Sequence[str], max_new: int,
                 vocab_size: int | None = None) -> list[str]:
    """The ``max_new`` pieces most used by a WordPiece vocabulary trained on ``sentences`` that ``tokenizer`` lacks
    (the trained vocabulary: ``vocab_size`` pieces, by default the old size plus twice ``max_new``)."""
    _wordpiece_json(tokenizer)
    old = tokenizer.get_vocab()
    trained = tokenizer.train_new_from_iterator(iter(sentences), vocab_size or len(old) + 2 * max_new)
    fresh = set(trained.get_vocab()) - set(old)
    uses = Counter(t for s in sentences for t in trained.tokenize(s) if t in fresh)
    return sorted(uses, key=lambda t: (-uses[t], t))[:max_new]


def extend_tokenizer(tokenizer: PreTrainedTokenizerFast, pieces: Sequence[str]) -> PreTrainedTokenizerFast:
    """``tokenizer`` with ``pieces`` appended to its vocabulary (ids ``len(old)`` onwards); the same class, special
    tokens, normalizer, pre-tokenizer and post-processor."""
    state = _wordpiece_json(tokenizer)
    vocab = state["model"]["vocab"]
    clash = [p for p in pieces if p in vocab]
    if clash:
        raise ValueError(f"pieces already in the vocabulary: {clash[:5]}")
    size = max(vocab.values()) + 1
    vocab.update({p: size + i for i, p in enumerate(pieces)})
    backend = Tokenizer.from_str(json.dumps(state))
    kwargs = {k: v for k, v in tokenizer.init_kwargs.items()
              if k not in ("tokenizer_file", "vocab_file", "name_or_path", "tokenizer_object")}
    return type(tokenizer)(tokenizer_object=backend, **kwargs)


def grow_embeddings(model: PreTrainedModel, old_vocab: Mapping[str, int], pieces: Sequence[str], unk: str) -> None:
    """Append a row per new piece to ``model``'s input embeddings (and a tied output layer): the mean of the old
    rows of the pieces ``old_vocab`` splits it into (:func:`wordpiece_split`)."""
    old = model.get_input_embeddings().weight.detach().clone()  # (V, D)
    size = old.shape[0]
    model.resize_token_embeddings(size + len(pieces), mean_resizing=False)
    rows = model.get_input_embeddings().weight
    with torch.no_grad():
        for i, piece in enumerate(pieces):
            ids = [old_vocab[p] for p in wordpiece_split(piece, old_vocab, unk)]
            rows[size + i] = old[ids].mean(0)


def pieces_per_word(tokenizer: PreTrainedTokenizerFast, sentences: Iterable[str]) -> float:
    """Pieces per whitespace-separated word of ``sentences`` (a language without spaces counts a sentence's
    characters' worth of pieces per 'word': compare a language with itself, before and after)."""
    words = pieces = 0
    for s in sentences:
        words += max(1, len(s.split()))
        pieces += len(tokenizer.tokenize(s))
    return pieces / max(words, 1)


def unknown_share(tokenizer: PreTrainedTokenizerFast, sentences: Iterable[str]) -> float:
    """The share (%) of ``sentences``' pieces that are the unknown token: a word of a script the vocabulary lacks is
    one [UNK], so its pieces per word read low before the extension and rise after it."""
    pieces = unknown = 0
    for s in sentences:
        tokens = tokenizer.tokenize(s)
        pieces += len(tokens)
        unknown += sum(t == tokenizer.unk_token for t in tokens)
    return 100.0 * unknown / max(pieces, 1)


def extend_pretrained(source: str | Path, sentences: Sequence[str], out: str | Path, max_new: int,
                      languages: Mapping[str, Sequence[str]] | None = None,
                      vocab_size: int | None = None) -> dict[str, Any]:
    """Write to ``out`` the pretrained folder ``source`` with its vocabulary extended by up to ``max_new`` pieces
    learned on ``sentences`` and its embeddings grown (:func:`grow_embeddings`); returns (and saves as
    ``vocabulary.json``) the pieces added and, per language of ``languages`` (code -> sentences), the pieces per
    word before and after (``vocab_size``: :func:`learn_pieces`'s)."""
    source, out = Path(source), Path(out)
    tokenizer = AutoTokenizer.from_pretrained(source)
    pieces = learn_pieces(tokenizer, sentences, max_new, vocab_size)
    extended = extend_tokenizer(tokenizer, pieces)
    model = AutoModel.from_pretrained(source)
    grow_embeddings(model, tokenizer.get_vocab(), pieces, tokenizer.unk_token)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    replaced = shutil.ignore_patterns("*.safetensors", "*.bin", "tokenizer*", "vocab.txt", "special_tokens_map.json",
                                      "config.json")  # the model's and tokenizer's own files, written below
    shutil.copytree(source, tmp, ignore=lambda folder, names: replaced(folder, names) if Path(folder) == source
                    else set())
    model.save_pretrained(tmp)
    extended.save_pretrained(tmp)
    report = {"source": str(source), "old_size": len(tokenizer), "added": len(pieces), "max_new": max_new,
              "pieces": pieces,
              "pieces_per_word": {lang: {"before": pieces_per_word(tokenizer, s), "after": pieces_per_word(extended, s),
                                         "unknown_before": unknown_share(tokenizer, s),
                                         "unknown_after": unknown_share(extended, s)}
                                  for lang, s in sorted((languages or {}).items())}}
    (tmp / "vocabulary.json").write_text(json.dumps(report, ensure_ascii=False, indent=1))
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    log.info("%s: %d pieces added (of %d) -> %s", source, len(pieces), max_new, out)
    return report
