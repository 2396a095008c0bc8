"""Your own parallel data (corpus kind ``files``, common/data/corpus_files.py): plain files named in a config, the
leakage rule, the length filter and the bad-line errors of the other kinds; TR trained on two TSV files given only
in a config file."""
import gzip
import json
import math
import os
import subprocess
import sys

import pytest

from common.config import ConfigError, workflow_config
from common.data import corpus_files
from common.data.cleaning import PairCleaner
from common.io import DataFormatError
from tests.conftest import DATA_ROOT, ROOT

needs_data = pytest.mark.skipif(not (DATA_ROOT / "INDEX.md").exists(), reason="shared data not found")


def pairs(n: int, lang: str) -> list[str]:
    return [f"{lang} Satz {i} ueber das Wetter\tsentence {i} about the weather" for i in range(n)]


def test_bad_lines_name_the_file_and_line(tmp_path):
    tsv = tmp_path / "de-en.tsv"
    tsv.write_text("a\tb\nc\td\te\n")
    with pytest.raises(DataFormatError, match=rf"^{tsv}:2: expected 2 tab-separated columns, found 3"):
        corpus_files.own_pairs({"pairs": {"deu": str(tsv)}}, PairCleaner())
    (tmp_path / "x.fr").write_text("un\ndeux\n")
    (tmp_path / "x.en").write_text("one\n")
    with pytest.raises(DataFormatError, match=r"x.en:2: misaligned parallel files"):
        entry = {"foreign": str(tmp_path / "x.fr"), "english": str(tmp_path / "x.en")}
        corpus_files.own_pairs({"pairs": {"fra": entry}}, PairCleaner())
    bad = tmp_path / "bad.tsv.gz"
    bad.write_bytes(gzip.compress(b"a\tb\n\xff\tc\n"))
    with pytest.raises(DataFormatError, match=rf"^{bad}:2: "):
        corpus_files.own_pairs({"pairs": {"deu": str(bad)}}, PairCleaner())


def test_the_length_filters_drop_and_count(tmp_path):
    tsv = tmp_path / "de-en.tsv.gz"
    lines = ["Hallo.\tHello.", " \tBlank.", f"{'lang ' * 50}\tlong", "k\ta much longer English side", "Ja.\tYes."]
    tsv.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    cleaner = PairCleaner(100)
    got = corpus_files.own_pairs({"pairs": {"deu": str(tsv)}, "min_length_ratio": 0.2}, cleaner)
    assert got == {"deu": [("Hallo.", "Hello."), ("Ja.", "Yes.")]}
    assert cleaner.report() == {f"files deu: {tsv}": {"kept": 3, "bad_bytes": 0, "blank": 1, "overlong": 1}}


def test_the_config_names_its_files_and_languages(tmp_path):
    ok = {"kind": "files", "files": {"pairs": {"deu": "a.tsv", "fra": {"foreign": "f.fr", "english": "f.en"}}}}
    assert workflow_config({"corpus": ok})["corpus"] == ok
    for bad in ({"kind": "files", "files": {"pairs": {"de": "a.tsv"}}},
                {"kind": "files", "files": {"pairs": {"deu": {"foreign": "f.fr"}}}},
                {"kind": "files", "files": {"pairs": {}}}):
        with pytest.raises(ConfigError, match="at 'corpus/files/pairs"):
            workflow_config({"corpus": bad})


@needs_data
def test_tr_trains_on_two_tsv_files_given_only_in_the_config(tmp_path):
    """``snakemake <TR's model> --configfile own.yaml``: the corpus job reads the two files, drops the pair that
    is a Tatoeba test sentence and the overlong one, and DAP's TR recipe trains its 40 smoke steps on the rest."""
    tatoeba = (DATA_ROOT / "tatoeba_v1" / "tatoeba.deu-eng.eng").read_text(encoding="utf-8").splitlines()[0]
    de = tmp_path / "mine" / "de-en.tsv"
    de.parent.mkdir()
    de.write_text("\n".join(pairs(150, "deu") + [f"Ein Testsatz\t{tatoeba}", f"{'x' * 300}\tlong"]) + "\n")
    fr = tmp_path / "mine" / "fr-en.tsv.gz"
    fr.write_bytes(gzip.compress(("\n".join(pairs(120, "fra")) + "\n").encode()))
    own = tmp_path / "own.yaml"
    own.write_text(f"""scale: smoke
data_root: {DATA_ROOT}
results_root: {tmp_path}/results
figures_root: {tmp_path}/figures
corpus:
  kind: files
  files:
    pairs: {{deu: {de}, fra: {fr}}}
    max_chars: 200
    bucc: {{pairs: [de], sources: [stsb, xnli], english_extra: [iwslt], english_per_split: 500, seed: 1,
            gold_per_split: {{sample: 20, training: 50, test: 50}}}}
""")
    summary = tmp_path / "results/smoke/dap/models/scratch/tr/seed1/summary.json"
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(tmp_path / "wd"),
                           str(summary), "--cores", "2", "--configfile", str(own)], capture_output=True, text=True,
                          timeout=900, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    manifest = json.loads((tmp_path / "results/smoke/dap/corpus/manifest.json").read_text())
    assert manifest["kind"] == "files" and manifest["train_languages"] == ["deu", "fra"]
    assert manifest["leakage"]["by_source"]["files"]["deu"] == {"taken": 151, "leaked": 1}
    assert manifest["leakage"]["dropped"] == {"deu": 1, "fra": 0}
    assert manifest["cleaning"][f"files deu: {de}"]["overlong"] == 1
    assert manifest["tatoeba_languages"] == ["deu", "fra"]
    result = json.loads(summary.read_text())  # 40 steps of 64 pairs: the in-batch loss well under its start, log 64
    assert result["step"] == 40 and result["final"]["loss_tr"] < math.log(64) / 2, result
