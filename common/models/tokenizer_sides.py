"""Which tokenizers a run's encoder initialisation needs, and how each is made.

An initialisation (``encoders.<init>`` of a config) is one encoder spec -- one tokenizer, folder
``tokenizer/<init>/shared`` -- or language-specific encoders ``{xx: spec, en: spec}`` (MoCo-BERT),
folders ``tokenizer/<init>/xx`` and ``tokenizer/<init>/en``. A pretrained spec saves its model's own
tokenizer; a from-scratch spec trains a WordPiece vocabulary on the corpus side(s) it reads, unless it names
a pretrained ``tokenizer`` (VMSST's random-init models use the mT5 vocabulary).
"""
from __future__ import annotations

import shlex
from typing import Any

SHARED = "shared"


def sides(encoder_cfg: dict[str, Any]) -> list[str]:
    return ["xx", "en"] if "xx" in encoder_cfg else [SHARED]


def spec(encoder_cfg: dict[str, Any], side: str) -> dict[str, Any]:
    """The encoder spec of one side (``SHARED``: the initialisation's one spec)."""
    return encoder_cfg if side == SHARED else encoder_cfg[side]


def folder(results: str, init: str, encoder_cfg: dict[str, Any]) -> str:
    """The ``--tokenizer`` argument of a training run: the shared tokenizer, or the folder holding xx/ and en/."""
    base = f"{results}/tokenizer/{init}"
    return f"{base}/{SHARED}" if sides(encoder_cfg) == [SHARED] else base


def arguments(cfg: dict[str, Any], init: str, side: str) -> str:
    """Command-line arguments of ``python -m common.models.tokenizer`` for one tokenizer, as a shell string (its
    model names and paths quoted)."""
    s = spec(cfg["encoders"][init], side)
    if s.get("vocabulary"):  # the model's own, extended with pieces learned on the corpus (and the model grown)
        return (f"--pretrained {shlex.quote(s['pretrained'])} --extend-vocabulary {s['vocabulary']['max_new']} "
                f"--side {'both' if side == SHARED else side}")
    if s.get("pretrained") or s.get("tokenizer"):  # the model's own, or a named pretrained tokenizer
        return f"--pretrained {shlex.quote(s.get('tokenizer') or s['pretrained'])}"
    tok = cfg["tokenizer"]
    return (f"--side {'both' if side == SHARED else side} --vocab-size {tok['vocab_size']} "
            f"--min-frequency {tok.get('min_frequency', 2)}")
