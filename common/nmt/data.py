"""The binarized data of one NMT setting, from the corpus manifest's ``translation`` entry
(:mod:`common.data.translation`): ``stage1/`` (train / valid: the concatenation of the setting's fine-tuning pairs)
and one folder per pair with its own train / valid (fine-tuning pairs) and every test set it is translated on
(fairseq subsets ``test_<name>``), with the raw target lines the BLEU is scored against
(``references/test_<name>.txt``). All with one tokenizer (:mod:`common.nmt.binarize`) and the target-language tags
of every pair of the setting. With ``target_vocab`` the target side gets a dictionary of its own
(:mod:`common.nmt.target_vocab`: BPE learned on the setting's training targets, leakage-filtered, saved as
``target_tokenizer/``) where the encoder's vocabulary cannot spell the target language.

The leakage rule (:mod:`common.data.leakage`) holds here too: a fine-tuning pair (train or valid) whose either
side appears in any test set of the manifest's translation data is dropped; the counts are in ``leakage.json``.

``python -m common.nmt.data --corpus manifest.json --tokenizer DIR --spec '{"finetune": [...], "tests": {...}}'
--out DIR``
"""
from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

from transformers import AutoTokenizer

from common.data.leakage import LeakageFilter
from common.data.loaders import iter_parallel
from common.data.manifest import load_manifest
from common.data.translation import test_sentences
from common.io import atomic_write, read_lines, write_json, write_lines
from common.nmt.binarize import binarize
from common.nmt.target_vocab import special_ids, train_target_tokenizer

log = logging.getLogger(__name__)


def build(manifest: dict[str, Any], tokenizer: Path, finetune: list[str], tests: dict[str, list[str]], out: Path,
          max_length: int = 256, train_set: str | None = None, target_vocab: int | None = None) -> None:
    """``target_vocab``: the size of the target side's own BPE dictionary (None: the encoder's tokenizer on both
    sides). ``train_set``: fine-tune on the pairs' named alternative training data (``translation[pair]["train_sets"]``,
    e.g. WMT'14 for HICTL's Table 4, where Table 5 trains the same pairs on IWSLT) instead of their default."""
    tr = manifest.get("translation")
    if not tr:
        raise KeyError("the corpus has no translation data (manifest key translation)")
    pairs = sorted(set(finetune) | set(tests))
    missing = [p for p in pairs if p not in tr]
    if missing:
        raise KeyError(f"the corpus has no translation pair {missing}; it has {sorted(tr)}")
    tags = sorted({p.split("-")[1] for p in pairs})
    leak = LeakageFilter(test_sentences(tr))
    dropped: dict[str, int] = {}
    parts: dict[tuple[str, str], tuple[str, str, str, str]] = {}

    def part(pair: str, split: str) -> tuple[str, str, str, str]:
        """The leakage-filtered files of a fine-tuning split (filtered once; stage 1 and the pair share them)."""
        if (pair, split) not in parts:
            parts[pair, split] = _filter(pair, split)
        return parts[pair, split]

    def _filter(pair: str, split: str) -> tuple[str, str, str, str]:
        src, tgt = pair.split("-")
        entry = tr[pair]
        if train_set:
            if train_set not in entry.get("train_sets", {}):
                raise KeyError(f"translation pair {pair} has no training set {train_set!r}; it has "
                               f"{sorted(entry.get('train_sets', {}))}")
            entry = entry["train_sets"][train_set]
        files = entry[split]
        if files is None:
            raise KeyError(f"translation pair {pair} has no {split} split")
        clean = out / "filtered" / pair
        paths = (clean / f"{split}.{src}", clean / f"{split}.{tgt}")
        n = 0
        with atomic_write(paths[0]) as fs, atomic_write(paths[1]) as ft:  # streamed: a split of any size
            for a, b in iter_parallel(*files):
                if leak.leaks(a) or leak.leaks(b):
                    n += 1
                else:
                    fs.write(a + "\n")
                    ft.write(b + "\n")
        dropped[f"{pair}.{split}"] = n
        return src, tgt, str(paths[0]), str(paths[1])

    target_tok = None
    if target_vocab:  # learned on every fine-tuning pair's training targets (each target language of the setting)
        learned = {p.split("-")[1] for p in finetune}
        unseen = sorted(p for p in pairs if p.split("-")[1] not in learned)
        if unseen:
            raise ValueError(f"test pairs {unseen} translate into a language the target dictionary is not learned on "
                             f"(it learns on the fine-tuning pairs' targets: {sorted(learned)})")
        target_tok = train_target_tokenizer([part(p, "train")[3] for p in finetune], target_vocab,
                                            out / "target_tokenizer",
                                            special_ids(AutoTokenizer.from_pretrained(tokenizer)))
    binarize(tokenizer, out / "stage1", tags, {"train": [part(p, "train") for p in finetune],
                                               "valid": [part(p, "valid") for p in finetune]}, max_length, target_tok)
    for pair in pairs:
        splits = {s: [part(pair, s)] for s in ("train", "valid") if pair in finetune}
        src, tgt = pair.split("-")
        for name in tests.get(pair, []):
            if name not in tr[pair]["tests"]:
                raise KeyError(f"translation pair {pair} has no test set {name!r}; it has {sorted(tr[pair]['tests'])}")
            files = tr[pair]["tests"][name]
            splits[f"test_{name}"] = [(src, tgt, files[0], files[1])]
            write_lines(out / pair / "references" / f"test_{name}.txt", read_lines(files[1]))
        write_json(out / pair / "references" / "pretokenized.json",
                   [t for t in tests.get(pair, []) if t in tr[pair].get("tokenized_bleu", [])])
        binarize(tokenizer, out / pair, tags, splits, max_length, target_tok)
    write_json(out / "leakage.json", {"dropped": dropped, "dropped_total": sum(dropped.values()),
                                      "test_sentences": len(leak)})
    log.info("leakage rule: dropped %d fine-tuning pairs (%s)", sum(dropped.values()), dropped)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", required=True)
    p.add_argument("--tokenizer", required=True)
    p.add_argument("--spec", required=True,
                   help='JSON: {"finetune": [pairs], "tests": {pair: [names]}, "max_length": n, "train_set": name, '
                        '"target_vocab": n}')
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    spec = json.loads(a.spec)
    build(load_manifest(a.corpus), Path(a.tokenizer), spec["finetune"], spec["tests"], Path(a.out),
          spec.get("max_length", 256), spec.get("train_set"), spec.get("target_vocab"))


if __name__ == "__main__":
    main()
