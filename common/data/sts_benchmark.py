"""The English STS benchmark of SentEval / SBERT / SimCSE: seven datasets, each a list of subsets.

* STS12-STS16: every ``STS.input.<subset>.txt`` of the SentEval-processed year folder with
  its ``STS.gs.<subset>.txt`` (STS13's SMT subset ships no input file for licence reasons,
  so it is absent, as in SentEval);
* STS-B: the test split of the original STS Benchmark;
* SICK-R: the test split of SICK (relatedness 1-5).

At smoke scale the synthetic generator's English set stands in, as one dataset.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from common.data import loaders

SENTEVAL_7 = ("STS12", "STS13", "STS14", "STS15", "STS16", "STS-B", "SICK-R")


def senteval7_paths(root: Path) -> list[Path]:
    """What :func:`english_sts` reads under ``root`` (``<data_root>/sts``): the input files of the five STS12-16 year
    folders (a glob pattern each: a year's subsets are the inputs it holds), STS-B's test split and SICK's test
    file."""
    return [*(root / "sts12-16" / f"{year}-en-test" / "STS.input.*.txt" for year in SENTEVAL_7[:5]),
            root / "stsbenchmark" / "sts-test.csv", root / "sick" / "SICK_test_annotated.txt"]


def english_sts(manifest: dict[str, Any]) -> tuple[dict[str, list[loaders.StsPairs]], list[Path]]:
    """dataset name -> its subsets, and every file read."""
    root = Path(manifest["sts_dir"])
    if manifest.get("sts_kind") == "synthetic":
        inp, gold = root / "STS.input.en-en.txt", root / "STS.gs.en-en.txt"
        return {"synthetic en-en": [loaders.read_sts_senteval(inp, gold, "en-en")]}, [inp, gold]
    out: dict[str, list[loaders.StsPairs]] = {}
    files: list[Path] = []
    *years, stsb, sick = senteval7_paths(root)
    for year, inputs in zip(SENTEVAL_7[:5], years, strict=True):
        folder = inputs.parent
        subsets = []
        for inp in sorted(folder.glob(inputs.name)):
            name = inp.name[len("STS.input."):-len(".txt")]
            gold = folder / f"STS.gs.{name}.txt"
            subsets.append(loaders.read_sts_senteval(inp, gold, name))
            files += [inp, gold]
        if not subsets:
            raise FileNotFoundError(f"{folder}: no {inputs.name} files")
        out[year] = subsets
    out["STS-B"] = [loaders.read_stsb(stsb)]
    out["SICK-R"] = [loaders.read_sick(sick)]
    return out, files + [stsb, sick]
