"""The ``translation_hf`` fairseq task: fairseq's translation task with dictionaries built from the Hugging Face
tokenizers stored beside the binarized data (``<data>/hf_tokenizer``, and ``<data>/hf_tokenizer_tgt`` for a target
side with a dictionary of its own; written by :mod:`common.nmt.binarize`), the target-language tags of
``<data>/tags.json``, and right-padded sources (an HF encoder numbers positions from the left). No ``from __future__
import annotations`` here: fairseq reads the config dataclass's field types."""

from dataclasses import dataclass, field
from pathlib import Path

from fairseq.tasks import register_task
from fairseq.tasks.translation import TranslationConfig, TranslationTask
from transformers import AutoTokenizer

from common.io import read_json
from common.nmt.fairseq_plugin.dictionary import HFDictionary
from common.nmt.target_vocab import tokenizer_dir


@dataclass
class TranslationHFConfig(TranslationConfig):
    left_pad_source: bool = field(default=False, metadata={"help": "pad the source on the left"})


@register_task("translation_hf", dataclass=TranslationHFConfig)
class TranslationHFTask(TranslationTask):
    @classmethod
    def load_dictionary(cls, filename: str) -> HFDictionary:
        """``filename`` is ``<data>/dict.<side>.txt``; the dictionary comes from ``<data>/hf_tokenizer`` (the target
        side: ``<data>/hf_tokenizer_tgt`` where the data has one)."""
        root = Path(filename).parent
        tags = read_json(root / "tags.json")["tags"]
        return HFDictionary(AutoTokenizer.from_pretrained(tokenizer_dir(root, Path(filename).name == "dict.tgt.txt")),
                            tags)
