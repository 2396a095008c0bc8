"""The vocabulary table: where an encoder's pretrained WordPiece vocabulary was extended on the corpus
(an encoder's ``vocabulary: {max_new: N}``; :mod:`common.models.vocabulary`), the average pieces per word of each
training language before and after, from the ``vocabulary.json`` the tokenizer rule saved (Japanese and Chinese
per sentence: they have no spaces)."""
from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

from common.io import read_json
from common.models import tokenizer_sides
from common.report.tables import Table, write_table

log = logging.getLogger(__name__)

NAME = "table_vocabulary"


def extended(cfg: dict[str, Any]) -> list[str]:
    """The encoder settings whose vocabulary the workflow extends."""
    return [init for init, enc in cfg["encoders"].items() if enc and enc.get("vocabulary")]


def vocabulary_table(cfg: dict[str, Any], results: Path | str) -> Table:
    """The table of a workflow's extended encoders (the ``vocabulary.json`` each tokenizer rule saved)."""
    return table_of({init: read_json(Path(tokenizer_sides.folder(str(results), init, cfg["encoders"][init]))
                                     / "vocabulary.json") for init in extended(cfg)})


def table_of(saved: dict[str, dict[str, Any]], note: str = "") -> Table:
    """The table of extensions: encoder -> the ``vocabulary.json`` of
    :func:`common.models.vocabulary.extend_pretrained`."""
    rows: list[list[Any]] = []
    notes: list[str] = []
    for init, report in saved.items():
        notes.append(f"'{init}': {report['added']:,} pieces added to the {report['old_size']:,} of the pretrained "
                     f"vocabulary (at most {report['max_new']:,}), each new embedding the mean of its old pieces'.")
        for lang, ppw in sorted(report["pieces_per_word"].items()):
            rows.append([init, lang, ppw["before"], ppw["after"], ppw["after"] / ppw["before"],
                         ppw.get("unknown_before"), ppw.get("unknown_after")])  # older files: no [UNK] shares
    return Table(NAME, "Pieces per word before and after the vocabulary extension",
                 ["encoder", "language", "before", "after", "after / before", "[UNK] before (%)", "[UNK] after (%)"],
                 rows,
                 [*notes, "Measured on the first 1,000 training pairs of each language (their non-English sides); "
                  "jpn and cmn per sentence (no spaces). A word of a script the old vocabulary lacks is one [UNK] "
                  "piece: where the [UNK] share before is high, pieces per word rise after the extension, as the "
                  "unknown words become real pieces.", *([note] if note else [])])


def main(argv: list[str] | None = None) -> None:
    """Write the table of an extension made outside a workflow (``python -m common.models.tokenizer --pretrained ...
    --extend-vocabulary N``), e.g. for a config that leaves the extension off."""
    p = argparse.ArgumentParser(description=main.__doc__)
    p.add_argument("--vocabulary", required=True, action="append", metavar="ENCODER=FOLDER",
                   help="an encoder's label and the folder the extension wrote (its vocabulary.json)")
    p.add_argument("--note", default="", help="a last note: what made the extension")
    p.add_argument("--out", required=True, help="folder for table_vocabulary.{csv,md,tex}")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    saved = {}
    for item in a.vocabulary:
        init, sep, folder = item.partition("=")
        if not sep:
            p.error(f"--vocabulary {item!r}: expected ENCODER=FOLDER")
        saved[init] = read_json(Path(folder) / "vocabulary.json")
    for path in write_table(table_of(saved, a.note), a.out):
        log.info("wrote %s", path)


if __name__ == "__main__":
    main()
