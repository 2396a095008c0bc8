"""A target dictionary of its own for NMT when the encoder's vocabulary cannot spell the target language (MiniLM's
English WordPiece lower-cases and strips accents, so its German output can never match a cased reference).

:func:`train_target_tokenizer` learns a byte-pair vocabulary (Sennrich et al. 2016, as fairseq's Transformer
recipes use) on a setting's training targets, cased, Unicode NFC, every whitespace character read as a space (no
piece holds one: fairseq writes pieces separated by whitespace), with SentencePiece's word-boundary marker so that
decoding restores the spaces exactly; it is saved as a Hugging Face tokenizer folder, which the binarizer and the
``translation_hf`` task read like the encoder's. Its special pieces ``<pad>``, ``</s>`` (end of sentence),
``<unk>`` and ``<s>`` take the ids the encoder's tokenizer gives its own (:func:`special_ids`): fairseq's translation
task shares padding, end of sentence and unknown between the two sides (its batches pad both with one id and start
the decoder's input with the source's end of sentence).

:func:`spelling` gives, for each target piece, the encoder's pieces of the same text: the [CLS]-vocabulary logit
bias (HICTL section 3.2) compares the encoder's [CLS] state with *target* words through the encoder's own
embedding table, and a target piece's row there is the mean of those pieces' rows
(:class:`common.nmt.fairseq_plugin.model.TargetSpelling`).
"""
from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

log = logging.getLogger(__name__)

TARGET_TOKENIZER = "hf_tokenizer_tgt"  # the folder of a binarized data folder's own target dictionary
SPECIALS = ("<pad>", "</s>", "<unk>", "<s>")
WORD_START = "\u2581"  # the word-boundary marker of the pieces (SentencePiece's)


def special_ids(source: PreTrainedTokenizerBase) -> dict[str, int]:
    """A tokenizer's padding, end of sentence ([SEP] or </s>), unknown and start ([CLS] or <s>; none for a tokenizer
    without one) ids by the target dictionary's piece names: the roles :class:`HFDictionary` gives them, and the ids
    a target dictionary's special pieces take (those of the source's)."""
    ids = {"<pad>": source.pad_token_id, "</s>": source.sep_token_id if source.sep_token_id is not None
           else source.eos_token_id, "<unk>": source.unk_token_id,
           "<s>": source.cls_token_id if source.cls_token_id is not None else source.bos_token_id}
    return {piece: i for piece, i in ids.items() if i is not None}


def _renumber(tokenizer_json: dict[str, Any], ids: Mapping[str, int]) -> dict[str, Any]:
    """The trained tokenizer's JSON with the special pieces at ``ids`` and every other piece, in its trained order,
    on the ids left free (still 0 .. V-1: a fairseq dictionary needs them contiguous)."""
    vocab: dict[str, int] = tokenizer_json["model"]["vocab"]
    if max(ids.values()) >= len(vocab):
        raise ValueError(f"the target vocabulary has {len(vocab)} pieces; the encoder's special ids {dict(ids)} need "
                         f"at least {max(ids.values()) + 1}")
    taken = set(ids.values())
    if len(taken) != len(ids):
        raise ValueError(f"two special pieces share an id: {dict(ids)}")
    free = (i for i in range(len(vocab)) if i not in taken)
    new = dict(ids)
    for piece in sorted(vocab, key=vocab.__getitem__):
        if piece not in new:
            new[piece] = next(free)
    tokenizer_json["model"]["vocab"] = new
    for added in tokenizer_json["added_tokens"]:
        added["id"] = new[added["content"]]
    return tokenizer_json


def train_target_tokenizer(files: Sequence[str | Path], vocab_size: int, out: str | Path,
                           ids: Mapping[str, int] | None = None) -> Path:
    """Learn a ``vocab_size``-piece BPE vocabulary on ``files`` (one sentence a line) and save it to ``out``;
    ``ids``: special piece -> the id it takes (:func:`special_ids`; default their trained ids 0-3)."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    if not files:
        raise ValueError("a target vocabulary needs training text: no files given")
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.normalizer = normalizers.Sequence([normalizers.NFC(), normalizers.Replace(Regex(r"\s"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=WORD_START)
    tok.decoder = decoders.Metaspace(replacement=WORD_START)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(SPECIALS), min_frequency=2,
                                  show_progress=False)
    tok.train([str(f) for f in files], trainer)
    if ids:
        tok = Tokenizer.from_str(json.dumps(_renumber(json.loads(tok.to_str()), ids)))
    wrapped = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="</s>", unk_token="<unk>",
                                      bos_token="<s>")
    out = Path(out)
    wrapped.save_pretrained(out)
    log.info("target vocabulary: %d pieces from %s -> %s", tok.get_vocab_size(), [str(f) for f in files], out)
    return out


def tokenizer_dir(data: Path, target: bool) -> Path:
    """The tokenizer folder of one side of a binarized data folder (:mod:`common.nmt.binarize`)."""
    own = data / TARGET_TOKENIZER
    return own if target and own.is_dir() else data / "hf_tokenizer"


def spelling(target: PreTrainedTokenizerBase, source: PreTrainedTokenizerBase) -> list[list[int]]:
    """For each target id (in id order), the source tokenizer's ids of that piece's text (a word-start piece is
    read as the start of a word, a continuation as its own word: the encoder has no shared continuation form);
    special pieces get none."""
    vocab = target.get_vocab()
    by_id = sorted(vocab, key=vocab.__getitem__)
    specials = set(target.all_special_tokens)
    out: list[list[int]] = []
    for piece in by_id:
        text = piece.replace(WORD_START, " ").strip()
        out.append([] if piece in specials or not text else
                   list(source(text, add_special_tokens=False)["input_ids"]))
    return out
