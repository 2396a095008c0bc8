"""The Snakemake workflow: smoke scale end to end, no-op rerun, config errors, paper-scale dry run."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from common.io import sha256_file
from tests.conftest import DATA_ROOT, ROOT

SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile")]


def snakemake(workdir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([*SNAKEMAKE, "-d", str(workdir), *args], capture_output=True, text=True)
    if check and proc.returncode:
        raise AssertionError(f"snakemake failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


def job_counts(text: str, paper: str = "dap") -> dict[str, int]:
    return {m.group(1): int(m.group(2)) for m in re.finditer(rf"^({paper}_\w+)\s+(\d+)$", text, flags=re.M)}


def job_blocks(text: str, rule: str) -> list[str]:
    """The dry-run paragraphs of one rule's jobs (each starts with a '[timestamp]' line)."""
    return [b for b in re.split(r"\n(?=\[\w{3} \w{3} )", text) if f"rule {rule}:" in b]


def test_unknown_config_key_is_an_error(tmp_path):
    proc = snakemake(tmp_path, "papers/dap/all", "-n", "--config", "scal=mini", check=False)
    assert proc.returncode != 0 and "'scal' was unexpected" in proc.stdout + proc.stderr


def test_paper_scale_dry_run_lists_gpu_jobs(tmp_path):
    proc = snakemake(tmp_path, "papers/dap/all", "-n", "--config", "scale=paper")
    counts = job_counts(proc.stdout)
    # 2 encoders x {TR, TR+TLM, DAP} x 3 seeds, plus 8 section-5 ablations on mBERT (seed 1)
    assert counts["dap_train"] == 2 * 3 * 3 + 8
    assert counts["dap_evaluate"] == 3 * counts["dap_train"]
    assert counts["dap_tokenizer"] == 2 and counts["dap_all"] == 1
    train_blocks = job_blocks(proc.stdout, "dap_train")
    assert len(train_blocks) == counts["dap_train"] and all("gpu=8" in b for b in train_blocks)
    assert "torchrun --standalone --nproc_per_node 8" in snakemake(
        tmp_path, "papers/dap/all", "-n", "-p", "--config", "scale=paper").stdout


@pytest.mark.skipif(not (DATA_ROOT / "INDEX.md").exists(), reason="shared data not found")
def test_smoke_workflow_end_to_end(tmp_path):
    cfg = ["--config", f"data_root={DATA_ROOT}"]
    snakemake(tmp_path, "papers/dap/all", "--cores", "2", *cfg)
    manifest = (tmp_path / "papers" / "dap" / "all").read_text().splitlines()
    rows = [l.split("\t") for l in manifest if not l.startswith("#")]
    paths = {r[0]: (r[1], r[2]) for r in rows}
    fig = "figures/dap/smoke"
    expected = [f"{fig}/{t}.{e}" for t in ("table1_tatoeba", "table2_bucc_training", "table3_bucc_test", "table4_xnli",
                                           "table5_direction", "table6_efficiency", "table7_xx2en", "table8_en2xx",
                                           "figure3_rho", "figure4_depth", "claims") for e in ("csv", "md", "tex")]
    expected += [f"{fig}/figure3_rho.png", f"{fig}/figure3_rho.pdf", f"{fig}/figure4_depth.png", f"{fig}/figure4_depth.pdf"]
    for e in expected:
        assert e in paths, e
        assert paths[e][0] == sha256_file(tmp_path / e) and paths[e][1] == "report"
    assert any(p.endswith("model.safetensors") and r == "train" for p, (_, r) in paths.items())
    table1 = (tmp_path / fig / "table1_tatoeba.md").read_text()
    assert "paper mBERT" in table1 and "scale 'smoke'" in table1
    # every number in Table 5 came from a run: xx->en row holds our values and the paper's 91.0
    t5 = (tmp_path / fig / "table5_direction.csv").read_text().splitlines()
    assert t5[1].startswith("xx→en,") and ",91.0," in t5[1]
    # nothing changed: a second run has nothing to do
    again = snakemake(tmp_path, "papers/dap/all", "--cores", "2", "-n", *cfg)
    assert "Nothing to be done" in again.stdout + again.stderr


def test_moco_paper_scale_dry_run_lists_gpu_jobs(tmp_path):
    proc = snakemake(tmp_path, "papers/moco/all", "-n", "--config", "scale=paper")
    counts = job_counts(proc.stdout, "moco")
    # init, MoCo-BERT, in-batch, +NLI; Figure 2: 3 queue sizes besides the main one, batch 256;
    # Table 4: 3 temperatures besides 0.04; Table 5: shared; Table 6: max, CLS; and the q204800 default
    assert counts["moco_train"] == 14
    assert counts["moco_evaluate"] == 3 * 14 + 2  # Tatoeba, BUCC, STS each; t-SNE and neighbours for the main run
    assert counts["moco_tokenizer"] == 2 and counts["moco_corpus"] == 1 and counts["moco_all"] == 1
    train_blocks = job_blocks(proc.stdout, "moco_train")
    assert len(train_blocks) == 14 and all("gpu=4" in b for b in train_blocks)
    assert all("gpu=1" in b for b in job_blocks(proc.stdout, "moco_evaluate"))
    printed = snakemake(tmp_path, "papers/moco/all", "-n", "-p", "--config", "scale=paper").stdout
    assert "torchrun --standalone --nproc_per_node 4 -m papers.moco.train --scale paper --run moco " in printed
    assert "--pretrained hfl/chinese-roberta-wwm-ext" in printed and "--pretrained bert-base-uncased" in printed


@pytest.mark.skipif(not (DATA_ROOT / "INDEX.md").exists(), reason="shared data not found")
def test_moco_smoke_workflow_end_to_end(tmp_path):
    cfg = ["--config", f"data_root={DATA_ROOT}"]
    snakemake(tmp_path, "papers/moco/all", "--cores", "2", *cfg)
    rows = [l.split("\t") for l in (tmp_path / "papers" / "moco" / "all").read_text().splitlines() if not l.startswith("#")]
    paths = {r[0]: (r[1], r[2]) for r in rows}
    fig = "figures/moco/smoke"
    tables = ("table1_tatoeba", "table2_bucc", "table3_sts_wmean", "table8_sts_all", "figure2_queue", "table4_temperature",
              "table5_momentum", "table6_pooling", "figure3_tsne", "table10_neighbors", "claims")
    expected = [f"{fig}/{t}.{e}" for t in tables for e in ("csv", "md", "tex")]
    expected += [f"{fig}/{f}.{e}" for f in ("figure2_queue", "figure3_tsne") for e in ("png", "pdf")]
    for e in expected:
        assert e in paths and paths[e][0] == sha256_file(tmp_path / e) and paths[e][1] == "report", e
    assert any(p.endswith("model/xx/model.safetensors") for p in paths)
    t1 = (tmp_path / fig / "table1_tatoeba.md").read_text()
    assert "| ours: MoCo-BERT | qaa→en |" in t1 and "| 97.4 |" in t1 and "scale 'smoke'" in t1
    t4 = (tmp_path / fig / "table4_temperature.md").read_text()
    assert [l.split("|")[1].strip() for l in t4.splitlines() if l.startswith("| 0")] == ["0.01", "0.04", "0.07", "0.1"]
    t5 = (tmp_path / fig / "table5_momentum.csv").read_text().splitlines()
    assert t5[0].startswith("keys from,") and t5[2].startswith("w/o momentum (shared),") and t5[2].endswith(",-0.01,0.00")
    again = snakemake(tmp_path, "papers/moco/all", "--cores", "2", "-n", *cfg)
    assert "Nothing to be done" in again.stdout + again.stderr
