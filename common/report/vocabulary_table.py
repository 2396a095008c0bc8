"""The vocabulary table (issue 35): where an encoder's pretrained WordPiece vocabulary was extended on the corpus
(an encoder's ``vocabulary: {max_new: N}``; :mod:`common.models.vocabulary`), the average pieces per word of each
training language before and after, from the ``vocabulary.json`` the tokenizer rule saved (Japanese and Chinese
per sentence: they have no spaces)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from common.io import read_json
from common.models import tokenizer_sides
from common.report.tables import Table

NAME = "table_vocabulary"


def extended(cfg: dict[str, Any]) -> list[str]:
    """The encoder settings whose vocabulary the workflow extends."""
    return [init for init, enc in cfg["encoders"].items() if enc and enc.get("vocabulary")]


def vocabulary_table(cfg: dict[str, Any], results: Path | str) -> Table:
    rows: list[list[Any]] = []
    notes: list[str] = []
    for init in extended(cfg):
        folder = Path(tokenizer_sides.folder(str(results), init, cfg["encoders"][init]))
        saved = read_json(folder / "vocabulary.json")
        notes.append(f"'{init}': {saved['added']:,} pieces added to the {saved['old_size']:,} of the pretrained "
                     f"vocabulary (at most {saved['max_new']:,}), each new embedding the mean of its old pieces'.")
        for lang, ppw in sorted(saved["pieces_per_word"].items()):
            rows.append([init, lang, ppw["before"], ppw["after"], ppw["after"] / ppw["before"]])
    return Table(NAME, "Pieces per word before and after the vocabulary extension",
                 ["encoder", "language", "before", "after", "after / before"], rows,
                 [*notes, "Measured on the training corpus; jpn and cmn per sentence (no spaces)."])
