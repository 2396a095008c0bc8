"""The Snakemake workflow: every experiment's smoke scale end to end (one run of ``snakemake all``
shared by the tests below), no-op rerun, config errors, paper-scale dry runs."""
import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from common.io import sha256_file
from common.models.embedder import load_embedder
from common.training.metrics_log import read_metrics
from tests import background
from tests.conftest import DATA_ROOT, ROOT

SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile")]
needs_data = pytest.mark.skipif(not (DATA_ROOT / "INDEX.md").exists(), reason="shared data not found")


def snakemake(workdir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([*SNAKEMAKE, "-d", str(workdir), *args], capture_output=True, text=True,
                          timeout=1800)  # a hung job fails the test, not the whole CI run
    if check and proc.returncode:
        raise AssertionError(f"snakemake failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


def job_counts(text: str, prefix: str) -> dict[str, int]:
    return {m.group(1): int(m.group(2)) for m in re.finditer(rf"^({prefix}_\w+)\s+(\d+)$", text, flags=re.M)}


def job_blocks(text: str, rule: str) -> list[str]:
    """The dry-run paragraphs of one rule's jobs (each starts with a '[timestamp]' line)."""
    return [b for b in re.split(r"\n(?=\[\w{3} \w{3} )", text) if f"rule {rule}:" in b]


@background.declare("smoke", timeout=3600, requires=DATA_ROOT / "INDEX.md")
def smoke_command(workdir: Path, tests: list[pytest.Item]) -> list[str]:
    """One run of ``snakemake all`` (every paper and the leaderboard, smoke scale) for the session, started in the
    background with the rehearsal when the session starts (tests/background.py)."""
    return [*SNAKEMAKE, "-d", str(workdir), "all", "--cores", "2", "--config", f"data_root={DATA_ROOT}"]


@pytest.fixture(scope="session")
def smoke() -> Path:
    run = background.wait("smoke")
    if run.returncode:
        raise AssertionError(f"snakemake failed:\n{run.tail()}")
    return run.workdir


def manifest(workdir: Path, target: str) -> dict[str, tuple[str, str]]:
    rows = [line.split("\t") for line in (workdir / target).read_text().splitlines() if not line.startswith("#")]
    return {r[0]: (r[1], r[2]) for r in rows}


def assert_report(workdir: Path, target: str, fig: str, tables: list[str], figures: list[str],
                  rule: str = "report") -> dict:
    paths = manifest(workdir, target)
    expected = [f"{fig}/{t}.{e}" for t in tables for e in ("csv", "md", "tex")]
    expected += [f"{fig}/claims.json" for t in tables if t == "claims"]  # the claims' records (common/report/claim.py)
    expected += [f"{fig}/{f}.{e}" for f in figures for e in ("png", "pdf")] + [f"{fig}/README.md"]
    for e in expected:
        assert e in paths, e
        assert paths[e][0] == sha256_file(workdir / e) and paths[e][1] == rule, e
    return paths


def test_unknown_config_key_is_an_error(tmp_path):
    proc = snakemake(tmp_path, "papers/dap/all", "-n", "--config", "scal=mini", check=False)
    assert proc.returncode != 0 and "'scal' was unexpected" in proc.stdout + proc.stderr


@needs_data
def test_dap_smoke(smoke):
    fig = smoke / "figures/dap/smoke"
    tables = ["figure1_tokens", "table1_tatoeba", "table2_bucc_training", "table3_bucc_test", "table4_xnli",
              "table5_direction", "table6_efficiency", "table7_xx2en", "table8_en2xx", "figure3_rho", "figure4_depth",
              "claims"]
    paths = assert_report(smoke, "papers/dap/all", "figures/dap/smoke", tables,
                          ["figure1_tokens", "figure3_rho", "figure4_depth", "figure_learning_curve"])
    # Figure 1: the initial encoder, TR and DAP, their tokens of the smoke data's first Tatoeba language (no Arabic)
    f1 = list(csv.reader((fig / "figure1_tokens.csv").read_text().splitlines()))
    assert [r[0] for r in f1[1:]] == ["no pre-training", "TR", "DAP"] and all(0 <= float(r[2]) <= 100 for r in f1[1:])
    tokens = json.loads((smoke / "results/smoke/dap/eval/scratch/dap/seed1/dap-tokens.json").read_text())["scores"]
    assert tokens["asked_language"] == "ara" and tokens["pairs"] == 30 and len(tokens["points"]) == tokens["tokens"]
    assert any(p.endswith("model.safetensors") and r == "train" for p, (_, r) in paths.items())
    # the learning curve (config learning_curve): TR's snapshot at step 20 evaluated on its own
    assert (smoke / "results/smoke/dap/models/scratch/tr/seed1/snapshots/step20/model.safetensors").exists()
    point = json.loads((smoke / "results/smoke/dap/curve/scratch/tr/seed1/step20/tatoeba@cosine.json").read_text())
    final = json.loads((smoke / "results/smoke/dap/eval/scratch/tr/seed1/tatoeba@cosine.json").read_text())
    assert point["task_name"] == "tatoeba@cosine" and point["scores"]["main_score"] != final["scores"]["main_score"]
    assert sum(p.endswith("tatoeba@cosine.json") and r == "evaluate" for p, (_, r) in paths.items()) == 8
    table1 = (fig / "table1_tatoeba.md").read_text()
    assert "paper mBERT" in table1 and "scale 'smoke'" in table1
    # the initial encoder without pre-training beside the paper's recomputed base model (Table 1: 42.5 at 14 langs)
    assert "| xx→en | scratch (no pre-training) | 14 |" in table1 and "| 42.5 |" in table1
    # every number in Table 5 came from a run: the xx->en row holds our values and the paper's 91.0
    t5 = (fig / "table5_direction.csv").read_text().splitlines()
    assert t5[1].startswith("xx→en,") and ",91.0," in t5[1]
    # a results JSON says which protocol produced it
    res = json.loads((smoke / "results/smoke/dap/eval/scratch/dap/seed1/bucc@ratio-k4.json").read_text())
    assert res["task_name"] == "bucc@ratio-k4" and res["scores"]["scoring"] == "ratio" and res["scores"]["k"] == 4
    assert res["model"]["kind"] == "sentence-encoder" and res["split"] == "test"


@needs_data
def test_moco_smoke(smoke):
    fig = smoke / "figures/moco/smoke"
    tables = ["table1_tatoeba", "table2_bucc", "table3_sts_wmean", "table8_sts_all", "figure2_queue",
              "table4_temperature", "table5_momentum", "table6_pooling", "figure3_tsne", "table10_neighbors", "claims"]
    paths = assert_report(smoke, "papers/moco/all", "figures/moco/smoke", tables, ["figure2_queue", "figure3_tsne"])
    assert any(p.endswith("model/xx/model.safetensors") for p in paths)
    t1 = (fig / "table1_tatoeba.md").read_text()
    assert "| ours: MoCo-BERT | qaa→en |" in t1 and "| 97.4 |" in t1 and "scale 'smoke'" in t1
    t4 = (fig / "table4_temperature.md").read_text()
    taus = [line.split("|")[1].strip() for line in t4.splitlines() if line.startswith("| 0")]
    assert taus == ["0.04", "0.1"]  # the smoke config's sweep
    t5 = (fig / "table5_momentum.csv").read_text().splitlines()
    assert t5[0].startswith("keys from,") and t5[2].startswith("w/o momentum (shared),")
    assert t5[2].endswith(",-0.01,0.00")
    # the showcase tasks ran for the main model only
    evals = smoke / "results/smoke/moco/eval/pair"
    assert sorted(p.parent.parent.name for p in evals.rglob("moco-tsne.json")) == ["moco"]
    assert json.loads((evals / "moco/seed1/moco-tsne.json").read_text())["model"]["kind"] == "dual-encoder"


def test_vmsst_smoke(smoke):
    fig = smoke / "figures/vmsst/smoke"
    tables = ["table1_main", "table2_related_sts", "table3_related_tatoeba", "table5_related_bucc", "table4_ablations",
              "table6_full", "table7_batch", "table8_zero_shot", "table9_sts_years", "table10_sts17", "table11_nq",
              "table12_mkqa", "table13_bucc", "claims"]
    paths = assert_report(smoke, "papers/vmsst/all", "figures/vmsst/smoke", tables, ["figure_training"])
    assert any(p.endswith("l4/vmsst/seed1/model/2_Dense/model.safetensors") for p in paths)  # the semantic mean
    t1 = (fig / "table1_main.csv").read_text().splitlines()
    assert t1[0].split(",")[-1] == "Score"
    ours = [r.split(",") for r in t1[1:] if ",ours," in r]
    assert len(ours) == 10  # the step-0 model and four objectives x two encoder settings
    assert [r[1] for r in ours[:5]] == ["VMSST at step 0", "Contrastive", "BiTranslation", "VMSST Contrastive", "VMSST"]
    for r in ours:  # the Score column is the mean of its six parts (section 6.2), recomputed from the cells
        eng, xl, tat, bc, bm, nq, mkqa, score = (float(r[i]) for i in (3, 4, 7, 8, 9, 10, 11, 12))
        assert score == pytest.approx((eng + xl + tat + (bc + bm) / 2 + nq + mkqa) / 6, abs=0.06)
    t4 = (fig / "table4_ablations.md").read_text()
    assert "| VMSST (fact.) | ours |" in t4 and "| VMSST (1 enc.) | ours |" not in t4 and "tables.ablations" in t4
    claims = (fig / "claims.md").read_text()
    assert "| VMSST's advantage grows with depth | section 6.5 | Score: VMSST − Contrastive | l2 → l4 |" in claims
    assert "| VMSST has the best Score | section 6.5 | Score: BiTranslation → VMSST | l2 |" in claims
    assert "| VMSST above the model it starts from | Table 1 (ours) | Score: VMSST at step 0 → VMSST | l2 |" in claims
    for row in ("has the largest effect) | section 7.1, Table 4 | Score: VMSST (no KL) → VMSST | l4 |",
                "'appear to weaken') | section 7.1, Table 4 | Score: VMSST (4 enc.) → VMSST | l4 |",
                "| Table 6 Score: BiTranslation → VMSST | l2 |",
                "| Table 6 Score: VMSST → full enc., full dec. | l2 |"):  # Tables 4 and 6's claims (sections 7.1-7.2)
        assert row in claims, row
    # section 6.2's BUCC: F1 at the threshold optimal on the reported split itself
    bucc = json.loads((smoke / "results/smoke/vmsst/eval/l2/vmsst/seed1/bucc@ratio-k4-oracle.json").read_text())
    assert bucc["scores"]["tune_split"] == bucc["scores"]["test_split"] == "test"
    assert bucc["scores"]["main_score"] == pytest.approx(bucc["scores"]["tune"]["f1"])
    log = read_metrics(smoke / "results/smoke/vmsst/models/l2/vmsst/seed1")
    # min(1, t / anneal_steps), t = the updates made before this one: the record of update 5 logs t = 4
    assert [r["kl_weight"] for r in log][:2] == pytest.approx([4 / 200, 9 / 200])


def test_hictl_smoke(smoke):
    fig = smoke / "figures/hictl/smoke"
    tables = ["table1_xtreme", "table2_comparison", "table3_ablations", "table10_xnli", "table11_pawsx",
              "table12_pos", "table13_ner", "table14_tatoeba", "table_qa", "figure4_tsne", "claims"]
    paths = assert_report(smoke, "papers/hictl/all", "figures/hictl/smoke", tables, ["figure4_tsne"])
    # the NMT tables are a report of their own (rule report_nmt), in nmt/
    nmt_tables = ["table4_high_resource", "table5_low_resource", "table6_transfer", "table_nmt_tests", "claims"]
    assert_report(smoke, "papers/hictl/all", "figures/hictl/smoke/nmt", nmt_tables, ["figure_nmt_training"],
                  rule="report_nmt")
    assert "The logit bias helps" in (fig / "nmt/claims.md").read_text()
    assert "Hard negatives help" in (fig / "claims.md").read_text() and "BLEU" not in (fig / "claims.md").read_text()
    # the encoder is saved in HF format with its tokenizer (the NMT workflow's starting point)
    model = smoke / "results/smoke/hictl/models/scratch/hictl_hns/seed1/model"
    assert (model / "config.json").exists() and (model / "tokenizer.json").exists() and any(
        p.endswith("hictl_hns/seed1/model/2_Dense/model.safetensors") for p in paths)
    assert (model / "3_Normalize").is_dir() and "seed 1" in (model / "README.md").read_text()  # a complete ST model
    assert not (model.parent.parent.parent / "lm_only/seed1/model/2_Dense").exists()  # f untrained
    t1 = (fig / "table1_xtreme.md").read_text()
    assert "| zero-shot, scratch | ours: HICTL + Hns | ours |" in t1 and "| translate-train-all | + Hns | paper |" in t1
    assert "no data for PAWS-X, POS, NER, MLQA, TyDiQA at this scale" in t1
    log = read_metrics(smoke / "results/smoke/hictl/models/scratch/hictl_hns/seed1")
    assert log[0]["p_avg"] > 0 and {"loss_lm", "loss_sentence", "loss_word"} <= set(log[-1])  # eq. 9's terms
    tsne = json.loads((smoke / "results/smoke/hictl/eval/scratch/hictl_hns/seed1/hictl-tsne.json").read_text())
    assert len(tsne["scores"]["points"]) == 5 * 10 * 6  # 5 languages x 10 sets x 6 sentences
    # NMT (section 3.2): stage 1 leaves the pre-trained encoder bit-identical, stage 2 changes it
    from safetensors.torch import load_file

    import common.nmt.fairseq_plugin  # noqa: F401  (lets weights_only=True read fairseq's checkpoints)

    pretrained = load_file(model / "model.safetensors")
    nmt = smoke / "results/smoke/hictl/nmt/low_resource/hictl_hns"

    def encoder(stage: str) -> dict:
        state = torch.load(nmt / stage / "checkpoint_best.pt", weights_only=True)["model"]
        return {k.removeprefix("encoder.backbone."): v for k, v in state.items() if k.startswith("encoder.backbone.")}

    stage1, stage2 = encoder("stage1"), encoder("stage2/qaa-en")
    assert stage1.keys() == pretrained.keys()
    assert all(torch.equal(stage1[k], pretrained[k]) for k in pretrained)
    assert not all(torch.equal(stage2[k], pretrained[k]) for k in pretrained)
    bleu = json.loads((nmt / "bleu/stage2-qaa-en/qaa-en.synthetic_test.json").read_text())
    assert bleu["n"] == 20 and len(bleu["items"]) == 20 and 0 <= bleu["main_score"] <= 100
    t6 = (fig / "nmt/table6_transfer.md").read_text()
    assert "| fine-tuned on qab→En | ours: random init | ours |" in t6 and "qac→En" in t6


@needs_data
def test_leaderboard_smoke(smoke):
    assert_report(smoke, "leaderboard/all", "figures/leaderboard/smoke", ["leaderboard"], ["leaderboard"])
    rows = list(csv.reader((smoke / "figures/leaderboard/smoke/leaderboard.csv").read_text().splitlines()))
    header, body = rows[0], {r[0]: dict(zip(rows[0], r)) for r in rows[1:]}
    assert header[1:4] == ["tatoeba@cosine", "tatoeba@cosine 95% CI", "tatoeba@cosine per seed"]
    assert set(body) == {"TR (in-batch translation ranking)", "TR+TLM", "DAP (TR + RTL)",
                         "MoCo-BERT (dual momentum contrast)", "Contrastive (symmetric in-batch, dot product)",
                         "VMSST (variational source separation)", "MLM/TLM only",
                         "HICTL (sentence + word CTL, hard negatives)", "random-init Transformer (NMT only)"}
    moco = body["MoCo-BERT (dual momentum contrast)"]
    assert moco["xnli@zero-shot"] == "n/a" and float(moco["tatoeba@cosine"]) >= 0  # XNLI needs one shared encoder
    random = body.pop("random-init Transformer (NMT only)")
    assert all(float(r["xnli@zero-shot"]) > 0 for name, r in body.items() if "MoCo" not in name)
    # the NMT column: TR's and MoCo-BERT's encoders fine-tuned (MoCo-BERT's non-English side), the others not at smoke
    nmt = "nmt@qaa-en.synthetic_test"
    assert header[-3:] == [nmt, f"{nmt} 95% CI", f"{nmt} per seed"] and random["tatoeba@cosine"] == "–"
    assert all(float(body[m][nmt]) >= 0 for m in ("TR (in-batch translation ranking)",
                                                  "MoCo-BERT (dual momentum contrast)")) and float(random[nmt]) >= 0
    assert body["DAP (TR + RTL)"][nmt] == "–"
    stage2 = smoke / "results/smoke/leaderboard/nmt/leaderboard/moco/stage2/qaa-en"
    assert json.loads((stage2 / "embedder.json").read_text())["encoder"].endswith("moco/seed1/model/xx")
    assert load_embedder(stage2).encode(["a", "b c"], "qaa").shape == (2, 32)  # fairseq's own checkpoint
    lo, hi = (float(x) for x in body["DAP (TR + RTL)"]["tatoeba@cosine 95% CI"].strip("[]").split(", "))
    assert lo <= float(body["DAP (TR + RTL)"]["tatoeba@cosine"]) <= hi
    readout = json.loads((smoke / "results/smoke/leaderboard/readout/vmsst.json").read_text())
    assert len(readout) == 1 and set(readout[0]["summary"]) == {"saved", "pooled", "centred"}
    md = (smoke / "figures/leaderboard/smoke/leaderboard.md").read_text()
    assert "- Readout check, VMSST (variational source separation) (python -m common.eval.readout, fp32;" in md
    assert "losing it): seed 1: saved " in md


@needs_data
def test_rerun_does_nothing(smoke):
    again = snakemake(smoke, "all", "--cores", "2", "-n", "--config", f"data_root={DATA_ROOT}")
    assert "Nothing to be done" in again.stdout + again.stderr


REPORT_MODULES = [*(f"papers.{f.parent.name}.{f.stem}" for f in sorted(ROOT.glob("papers/*/report*.py"))),
                  "common.leaderboard.report"]


@pytest.mark.parametrize("scale", ["smoke", "paper"])
def test_loading_the_workflow_and_the_reports_imports_no_torch(tmp_path, scale):
    """Every snakemake invocation loads the workflow (on Slurm every job loads it again), and a report job reads only
    results JSON: neither pays for importing torch and transformers (~5 s). So task declarations, run registries and
    the bench's machine name are plain data. Fails when a module the Snakefiles or a report imports imports torch."""
    assert {"papers.dap.report", "papers.hictl.report_nmt", "common.leaderboard.report"} < set(REPORT_MODULES)
    code = (f"import importlib, sys\nfrom snakemake.cli import main\n"
            f"sys.argv = ['snakemake', '-s', {str(ROOT / 'Snakefile')!r}, '-d', {str(tmp_path)!r}, 'all', '-n', "
            f"'--config', 'scale={scale}', 'data_root={DATA_ROOT}']\n"
            "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            f"for m in {REPORT_MODULES!r}:\n    importlib.import_module(m)\n"
            "print(sorted({'torch', 'transformers'} & set(sys.modules)))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=1800, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def paper_dry_run(workdir: Path, target: str) -> tuple[dict[str, int], str]:
    """Job counts and the printed dry run (``-n -p``) of a paper-scale target."""
    printed = snakemake(workdir, target, "-n", "-p", "--config", "scale=paper", f"data_root={DATA_ROOT}").stdout
    return job_counts(printed, target.split("/")[-2]), printed


def assert_slurm_shape(printed: str, rule: str, experiment: str, threads: int = 8) -> dict[str, int]:
    """Every job of a training rule prints its Slurm shape: one node, the GPUs the census found for it from memory
    (figures/census/paper.json, ``gpus_from: memory``: the fewest whose memory holds its global batch at one micro
    batch; the config's where it did not), the CPUs of its ranks and the census's runtime; it runs our per-node
    launcher with one rank per GPU, or one process on one GPU, with the activation checkpointing the census chose for
    it where it chose (``gradient_checkpointing: auto``). A run that only saves its encoder (method init) asks for one
    GPU and the CPUs of one rank. Returns each job's GPUs (``init/method`` -> GPUs)."""
    from common.workflow.launch import census_jobs

    census = census_jobs(experiment)
    blocks = job_blocks(printed, rule)
    saves = [b for b in blocks if "method=init," in b]
    assert saves and len(saves) < len(blocks)
    shapes = {}
    for b in blocks:
        job = "/".join(re.search(rf"{key}=([^,\s]+)", b).group(1) for key in ("init", "method"))
        row = census[job]
        gpus = row["gpus"]
        assert row.get("gpus_from") in ({"one rank"} if b in saves else {"memory", "paper"}), (job, row)
        assert f"gpu={gpus}, nodes=1, cpus_per_task={threads * gpus}," in b, b
        assert f"runtime={row['runtime_minutes']}" in b and f"mem_mb={row['mem_mb']}" in b, b
        chosen = row.get("checkpointing")
        assert (f"--gradient_checkpointing {chosen} " in b) if chosen else ("--gradient_checkpointing" not in b), b
        if gpus > 1:
            assert f"OMP_NUM_THREADS={threads} python -m common.distributed.launch --nproc {gpus} -m papers." in b, b
        else:
            assert f"OMP_NUM_THREADS={threads} python -m papers." in b and "common.distributed.launch" not in b, b
        shapes[job] = gpus
    return shapes


def test_dap_paper_scale_dry_run_lists_gpu_jobs(tmp_path):
    counts, printed = paper_dry_run(tmp_path, "papers/dap/all")
    # 2 encoders x {TR, TR+TLM, DAP} x 3 seeds, each encoder without pre-training (seed 1), plus 8 section-5
    # ablations on mBERT (seed 1)
    assert counts["dap_train"] == 2 * 3 * 3 + 2 + 8
    # one job per (run, task): Tatoeba, BUCC and XNLI, and Figure 1's token states of mBERT's initial encoder, TR and
    # DAP (seed 1)
    assert counts["dap_evaluate_task"] == 3 * counts["dap_train"] + 3 and "dap_evaluate" not in counts
    assert printed.count("--task dap-tokens --model-dir") == 3
    assert counts["dap_tokenizer"] == 2 and counts["dap_all"] == 1 and re.search(r"^model\s+2$", printed, re.M)
    # every job holds its 1,024 pairs on one 80 GB GPU (the census: TR+TLM on XLM-R base at 74.5 GiB, the most)
    assert set(assert_slurm_shape(printed, "dap_train", "dap").values()) == {1}
    assert all("gpu=1" in b for b in job_blocks(printed, "dap_evaluate_task"))
    assert "OMP_NUM_THREADS=8 python -m papers.dap.train --experiment dap --scale paper --method dap " in printed
    for task in ("tatoeba@cosine", "bucc@ratio-k4", "xnli@zero-shot"):
        assert printed.count(f"--task {task} --model-dir") == 28
    # the pinned checkpoints, downloaded once into the cache by the model rule
    assert "cache/models/bert-base-multilingual-cased@3f076fdb1ab68d5b2880cb87a0886f315b8146f8/done.json" in printed


@needs_data
def test_dap_mini_targets_split_the_runs(tmp_path):
    """DAP's mini config splits its work (``targets``, common/targets.py): papers/dap/all trains the three
    methods on 3 seeds, the initial encoder and the two runs without Anki; papers/dap/section5 the four section 5
    ablations, the main DAP run on the ablation seed (their default point) and Figure 1's TR and initial encoder, and
    writes its outputs with its own report rule."""
    counts = {}
    for target in ("papers/dap/all", "papers/dap/section5"):
        printed = snakemake(tmp_path, target, "-n", "--config", "scale=mini", f"data_root={DATA_ROOT}").stdout
        counts[target] = job_counts(printed, "dap")
    main, section5 = counts["papers/dap/all"], counts["papers/dap/section5"]
    assert main["dap_train"] == 3 * 3 + 1 + 2 and main["dap_report"] == 1 and "dap_report_section5" not in main
    assert section5["dap_train"] == 4 + 3 and section5["dap_report_section5"] == 1
    assert section5["dap_target_section5"] == 1 and not {"dap_report", "dap_all", "dap_efficiency"} & set(section5)


@needs_data
def test_leaderboard_rows_regenerate_some_methods_alone(tmp_path):
    """``leaderboard/rows`` at mini: VMSST at step 0 and trained (2 seeds), their evaluations and readout checks; no
    NMT job (at mini the NMT column is target leaderboard/nmt of its own, read from its report) nor any other method.
    At smoke, where the column runs with the table, a row's NMT system runs with it, not the random-init row, which
    the committed table keeps."""
    printed = snakemake(tmp_path, "leaderboard/rows", "-n", "--config", "scale=mini", f"data_root={DATA_ROOT}",
                        "leaderboard_methods=[vmsst_step0, vmsst]").stdout
    counts = job_counts(printed, "leaderboard")
    assert counts["leaderboard_train"] == 1 + 2 and counts["leaderboard_evaluate"] == 3
    assert counts["leaderboard_readout"] == 2 and counts["leaderboard_rows"] == 1
    assert not [job for job in counts if "nmt" in job]
    assert not {"leaderboard_report", "leaderboard_all"} & set(counts)
    smoke = job_counts(snakemake(tmp_path, "leaderboard/rows", "-n", "--config", f"data_root={DATA_ROOT}",
                                 "leaderboard_methods=[tr]").stdout, "leaderboard")
    assert smoke["leaderboard_nmt_stage1"] == 1 and "leaderboard_nmt_random" not in smoke


def test_moco_paper_scale_dry_run_lists_gpu_jobs(tmp_path):
    counts, printed = paper_dry_run(tmp_path, "papers/moco/all")
    # init, MoCo-BERT, in-batch, +NLI; Figure 2: 3 queue sizes besides the main one, batch 256;
    # Table 4: 3 temperatures besides 0.04; Table 5: shared; Table 6: max, CLS; and the q204800 default
    assert counts["moco_train"] == 14
    # Tatoeba, BUCC, STS per run; t-SNE and neighbours for the main run
    assert counts["moco_evaluate_task"] == 14 * 3 + 2
    assert counts["moco_tokenizer"] == 2 and counts["moco_corpus"] == 1 and counts["moco_all"] == 1
    # the paper's 4 GPUs hold 1,024 pairs of 128 tokens (2 would not); Figure 2's batch of 256 fits one
    shapes = assert_slurm_shape(printed, "moco_train", "moco")
    assert shapes["pair/moco"] == shapes["pair/q204800_t0.1"] == 4 and shapes["pair/q204800_b256"] == 1
    assert "OMP_NUM_THREADS=8 python -m common.distributed.launch --nproc 4 -m papers.moco.train" in printed
    assert all("gpu=1" in b for b in job_blocks(printed, "moco_evaluate_task"))
    assert "-m papers.moco.train --experiment moco --scale paper --method moco " in printed
    assert "--pretrained hfl/chinese-roberta-wwm-ext" in printed and "--pretrained bert-base-uncased" in printed
    for task in ("tatoeba@cosine", "bucc@distance-k3", "sts-en@wmean"):
        assert printed.count(f"--task {task} --model-dir") == 14


def test_vmsst_paper_scale_dry_run_lists_gpu_jobs(tmp_path):
    counts, printed = paper_dry_run(tmp_path, "papers/vmsst/all")
    # 3 settings x (4 objectives + the step-0 model); Table 4: 8 ablations; Table 6: 4 models; Table 7: 2 settings x
    # 2 batches x 2
    assert counts["vmsst_train"] == 12 + 3 + 8 + 4 + 8
    assert counts["vmsst_evaluate_task"] == 8 * counts["vmsst_train"]
    assert counts["vmsst_tokenizer"] == 3 and counts["vmsst_corpus"] == 1 and counts["vmsst_all"] == 1
    # the census takes selective activation checkpointing for every VMSST job: the 6-layer model then holds its
    # 2,048 pairs on 2 GPUs, the four-encoder model on 8; Table 7's 2x and 4x VMSST batches keep the paper's 8 GPUs
    # and their micro-batches of 256 pairs (vmsst.micro_batch_per_gpu: one micro batch would need 16 or 32 GPUs)
    shapes = assert_slurm_shape(printed, "vmsst_train", "vmsst")
    assert (shapes["l6/vmsst"], shapes["l24/vmsst_4enc"], shapes["l24/vmsst_b4"]) == (2, 8, 8)
    assert "--method vmsst --init l24 --seed 1 " in printed and "--gradient_checkpointing selective " in printed
    assert "-m papers.vmsst.train --experiment vmsst --scale paper --method vmsst_b4 --init l24" in printed
    assert printed.count("--pretrained google/mt5-large") == 3  # the random-init settings use mT5's vocabulary too
    assert "--task question-retrieval@nq --model-dir" in printed and "--task question-retrieval@mkqa" in printed


def test_hictl_paper_scale_dry_run_lists_gpu_jobs(tmp_path):
    counts, printed = paper_dry_run(tmp_path, "papers/hictl/all")
    # 2 encoders x (init, MLM/TLM only, HICTL, + Hns) and Table 3's 3 ablations of the large model
    assert counts["hictl_train"] == 2 * 4 + 3
    # every evaluation task of every run is a job of its own (a failed task reruns alone), Figure 4's t-SNE included
    assert counts["hictl_evaluate_task"] == 145 and "hictl_evaluate" not in counts
    # HICTL large with both CTLs needs 4 GPUs for its 1,024 examples of up to 2 x 256 tokens under full activation
    # checkpointing (selective would need more than a node), its ablation without the MT pairs 2; the census takes
    # selective for the large MLM/TLM-only run (4 GPUs) and the base HICTL runs (8)
    shapes = assert_slurm_shape(printed, "hictl_train", "hictl")
    assert (shapes["xlmr_large/hictl_hns"], shapes["xlmr_large/hictl_hns_no-mt"], shapes["xlmr_large/lm_only"],
            shapes["xlmr_base/hictl_hns"]) == (4, 2, 4, 8)
    assert "--gradient_checkpointing full " in printed and "--gradient_checkpointing selective " in printed
    assert "-m papers.hictl.train --experiment hictl --scale paper --method hictl_hns --init xlmr_large" in printed
    assert "--task qa@xquad-translate-train-all --model-dir" in printed
    # NMT (section 4.2) from HICTL Base: stage 1 per (setting, pre-trained system), stage 2 per pair, random init
    # per pair; Tables 4 (2 pairs), 5 (6 pairs) and 6 (Cs->En, Hi->En)
    assert (counts["hictl_nmt_stage1"], counts["hictl_nmt_stage2"], counts["hictl_nmt_random"]) == (6, 18, 10)
    assert all("gpu=8" in b for r in ("stage1", "stage2", "random") for b in job_blocks(printed, f"hictl_nmt_{r}"))
    # their Slurm time and memory come from the census (common/census/nmt.py), as the train rules' do
    from common.workflow.launch import census_jobs

    census = census_jobs("hictl")
    for rule, job in (("stage1", "nmt/low_resource/hictl_hns/stage1"), ("random", "nmt/high_resource/random/en-de")):
        row = census[job]
        assert any(f"mem_mb={row['mem_mb']}" in b and f"runtime={row['runtime_minutes']}" in b
                   for b in job_blocks(printed, f"hictl_nmt_{rule}")), (rule, row["runtime_minutes"])
    # and so do the evaluation jobs', one GPU each (common/census/evaluation.py): XNLI translate-train-all's hours
    row = census["eval/xlmr_large/xnli@translate-train-all"]
    assert any(f"mem_mb={row['mem_mb']}" in b and f"runtime={row['runtime_minutes']}" in b and "gpu=1" in b
               for b in job_blocks(printed, "hictl_evaluate_task")), row["runtime_minutes"]
    assert ("--encoder results/paper/hictl/models/xlmr_base/hictl_hns/seed1/model --save-dir "
            "results/paper/hictl/nmt/low_resource/hictl_hns/stage1") in printed
    # Table 4 binarizes its pairs' WMT'14 training data (the manifest's train_sets), Table 5 the same pairs' IWSLT data
    assert ('"finetune": ["en-de", "en-fr"], "tests": {"en-de": ["wmt14_newstest2014"], '
            '"en-fr": ["wmt14_newstest2014"]}, "max_length": 256, "train_set": "wmt14"') in printed
    assert '"train_set": null' in printed


def test_hictl_mini_nmt_is_a_target_of_its_own(tmp_path):
    """At mini the NMT tables (rule report_nmt) are target papers/hictl/nmt (nmt.own_target): it trains only the
    encoders NMT fine-tunes and runs none of the pre-training evaluations; papers/hictl/all runs no NMT job, so each
    target fits the 4-hour budget alone."""
    proc = snakemake(tmp_path, "papers/hictl/nmt", "-n", "--config", "scale=mini", f"data_root={DATA_ROOT}")
    counts = job_counts(proc.stdout, "hictl")
    assert counts["hictl_report_nmt"] == 1 and counts["hictl_nmt_target"] == 1
    assert "hictl_report" not in counts and "hictl_evaluate" not in counts
    trained = {re.search(r"method=([\w-]+)", b).group(1) for b in job_blocks(proc.stdout, "hictl_train")}
    # the no-bias system fine-tunes the same encoder; the random-init Transformer needs none
    assert trained == {"hictl_hns"}
    main = job_counts(snakemake(tmp_path, "papers/hictl/all", "-n", "--config", "scale=mini",
                                f"data_root={DATA_ROOT}").stdout, "hictl")
    assert not [job for job in main if "nmt" in job] and main["hictl_report"] == 1


def test_leaderboard_mini_nmt_column_is_a_target_of_its_own(tmp_path):
    """At mini the NMT column (nmt.own_target) is target leaderboard/nmt: it trains the encoders its systems
    fine-tune (the four papers' methods, and the initial encoder's save), runs their NMT jobs and its report, and
    rewrites the table's column; leaderboard/all runs no NMT job, so each fits the 4-hour budget alone."""
    proc = snakemake(tmp_path, "leaderboard/nmt", "-n", "--config", "scale=mini", f"data_root={DATA_ROOT}")
    counts = job_counts(proc.stdout, "leaderboard")
    assert counts["leaderboard_report_nmt"] == 1 and counts["leaderboard_nmt_target"] == 1
    assert counts["leaderboard_nmt_stage1"] == counts["leaderboard_nmt_stage2"] == 5
    assert counts["leaderboard_nmt_random"] == 1
    assert not {"leaderboard_evaluate", "leaderboard_readout", "leaderboard_report"} & set(counts)
    trained = {re.search(r"method=([\w-]+)", b).group(1) for b in job_blocks(proc.stdout, "leaderboard_train")}
    assert trained == {"init", "dap", "moco", "hictl", "vmsst"}
    main = job_counts(snakemake(tmp_path, "leaderboard/all", "-n", "--config", "scale=mini",
                                f"data_root={DATA_ROOT}").stdout, "leaderboard")
    assert not [job for job in main if "nmt" in job] and main["leaderboard_report"] == 1
    # the column of the whole table: a restriction is refused before anything runs
    refused = snakemake(tmp_path, "leaderboard/nmt", "-n", "--config", "scale=mini", f"data_root={DATA_ROOT}",
                        "leaderboard_methods=[dap]", check=False)
    assert refused.returncode and "no restriction of leaderboard_methods" in refused.stdout + refused.stderr


def test_leaderboard_dry_runs(tmp_path):
    counts = job_counts(snakemake(tmp_path, "leaderboard/all", "-n", "--config", "scale=paper").stdout, "leaderboard")
    # TR, TR+TLM, DAP, MoCo-BERT, Contrastive, BiTranslation, VMSST, MLM/TLM only, HICTL x 3 seeds; the initial
    # encoder (no training) on one
    assert counts["leaderboard_train"] == 9 * 3 + 1
    # Tatoeba, BUCC (cosine, ratio margin), STS and XNLI per run at paper scale, one job each; XNLI: not for MoCo
    assert counts["leaderboard_evaluate_task"] == 28 * 5 - 3
    small = snakemake(tmp_path, "leaderboard/all", "-n", "--config", "leaderboard_methods=[tr]",
                      "leaderboard_tasks=[tatoeba@cosine]").stdout
    assert job_counts(small, "leaderboard") == {f"leaderboard_{r}": 1 for r in
                                                ("corpus", "tokenizer", "train", "evaluate", "report", "all")}


def test_bench_dry_runs(tmp_path):
    """``snakemake bench/all``: every benchmark once, each taking all the cores (no two time at once)."""
    for scale in ("smoke", "mini"):
        out = snakemake(tmp_path, "bench/all", "-n", "--cores", "2", "--config", f"scale={scale}",
                        f"data_root={DATA_ROOT}").stdout
        assert job_counts(out, "bench") == {f"bench_{r}": 1 for r in ("bucc_set", "train_step", "encode", "mining",
                                                                      "overheads", "scaling", "report", "all")}
        blocks = [b for r in ("train_step", "mining", "scaling") for b in job_blocks(out, f"bench_{r}")]
        assert len(blocks) == 3 and all("threads: 2" in b for b in blocks)
    proc = snakemake(tmp_path, "bench/all", "-n", "--config", "scale=paper", check=False)
    assert proc.returncode and "the benchmarks have no 'paper' scale" in proc.stdout + proc.stderr
