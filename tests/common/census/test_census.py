"""The census: its formulas by hand, one paper's step counted through the real recipe at a tiny stand-in size, and
the census's figures reaching the paper-scale train rules and the preflight."""
import json
from types import SimpleNamespace

import pytest

from common.census import estimate as est


def test_formulas_by_hand():
    line = est.Linear.through((4, 8), (10.0, 18.0))
    assert (line.fixed, line.per_row, line.at(100)) == (2.0, 2.0, 202.0)
    # Adafactor: a 3 x 4 matrix keeps 3 + 4 factors, a 5-vector its 5 second moments; fp32
    assert est.optimizer_bytes("adafactor", 17, [(3, 4)], 12) == 4 * (7 + 5)
    assert est.optimizer_bytes("adamw", 17, [(3, 4)], 12) == 8 * 17
    assert est.model_state_bytes(100, 80, 640, zero=0, ranks=4) == {"weights": 400, "gradients": 320,
                                                                     "optimizer": 640}
    z2 = est.model_state_bytes(100, 80, 640, zero=2, ranks=4)
    assert z2 == {"weights": 400, "gradients": 80, "optimizer": 160, "zero_buffers": 80 + 320}
    assert est.model_state_bytes(100, 80, 640, zero=1, ranks=4)["gradients"] == 320
    # Korthikanti et al. eq. 1: s b h (34 + 5 a s / h) = 128 * 8 * 768 * (34 + 10)
    assert est.korthikanti_layer_bytes(128, 8, 768, 12) == 128 * 8 * 768 * 44
    a100 = est.GPUS["a100"]
    assert est.wall_hours(3600 * 8 * a100.bf16_flops * 0.3, 8, a100, 0.3) == pytest.approx(1.0)
    assert est.runtime_minutes(2.0) == 150 and est.runtime_minutes(0.01) == 30
    assert est.runtime_minutes(100.0) == est.MAX_RUNTIME_MINUTES == 2880  # 100 h x 1.25, cut at the partition's 48 h


def test_resubmissions_and_the_retries_they_need():
    """A job resubmits ceil(time / (limit - stop margin)) - 1 times: within its limit none; 100 h under a 48 h limit
    with a 10-minute stop margin: 6,000 min / 2,870 = 2.09 -> 3 attempts, 2 resubmissions. The profile's retries
    cover the most any job needs plus two for a failure or a preemption."""
    assert est.resubmissions(2.0, est.runtime_minutes(2.0)) == 0  # 120 min of work, a 150-minute limit
    assert est.resubmissions(100.0, 2880) == 2
    assert est.resubmissions(100.0, 2880, stop_margin_minutes=0) == 2  # 6,000 / 2,880 = 2.08
    assert est.resubmissions(96.0, 2880, stop_margin_minutes=0) == 1  # exactly two limits' worth
    assert est.needs(0, 0, 1e18, 1, 1, 1.0)["resubmissions"] == 0
    rows = [{"resubmissions": 2}, {"resubmissions": 5}, {"job": "no step"}]
    assert est.required_retries(rows) == 5 + est.FAILURE_RETRIES == 7
    # a row kept from an earlier census (its job not countable now) gets today's limit and resubmissions
    from common.census.__main__ import kept

    row = kept({"job": "a/b", "gpus": 8, "wall_hours": {"a100": 100.0}, "runtime_minutes": 7500}, 1, "too large")
    assert (row["runtime_minutes"], row["resubmissions"], row["gpus_from"]) == (2880, 2, "paper")


def test_the_slurm_profile_allows_the_resubmissions_the_census_expects():
    """profiles/slurm's retries (a timed-out training job checkpoints and is submitted again) cover the census's
    longest job at its time limit, plus two for a failure or a preemption; the rule is checked in the census's
    markdown too."""
    from common.census.__main__ import markdown, profile_retries
    from common.workflow.launch import CENSUS

    census = json.loads(CENSUS.read_text())
    need = est.required_retries(census["jobs"])
    assert profile_retries() >= need > est.FAILURE_RETRIES  # some paper-scale job outlasts the partition's limit
    text = markdown(census["jobs"], census["mfu"], census["crosschecks"], [], profile_retries())
    assert f"need Slurm retries >= {need}" in text and "too few" not in text
    assert "too few" in markdown(census["jobs"], census["mfu"], census["crosschecks"], [], need - 1)


TINY = {"model_type": "bert", "architectures": ["BertForMaskedLM"], "vocab_size": 700, "hidden_size": 32,
        "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64, "max_position_embeddings": 64,
        "type_vocab_size": 2}


def test_a_dap_step_counted_through_its_recipe(tmp_path, monkeypatch):
    """DAP's paper-scale TR job with mBERT replaced by a tiny BERT: the probe builds the recipe's model (its
    parameters those of the bare encoder), and FLOPs and saved activations grow with the rows."""
    from transformers import BertConfig, BertModel

    from common.census import architectures, probe
    from common.config import load_config
    from common.runs import Run

    monkeypatch.setitem(architectures.CONFIGS, "bert-base-multilingual-cased", TINY)
    cfg = load_config("dap", "paper")
    cfg["training"]["max_length"] = 12
    manifest = probe.probe_corpus("dap", tmp_path, "-")
    counts = probe.count_steps("dap", cfg, Run("tr", "mbert", 1), (2, 4), manifest, tmp_path / "probe")
    expected = sum(p.numel() for p in BertModel(BertConfig(**TINY), add_pooling_layer=False).parameters())
    assert counts[0].params == counts[0].trainable_params == expected
    # two sides x rows x 12 tokens; forward + backward = 3 x the forward's 2 N t, plus attention
    non_embedding = expected - sum(p.numel() for p in BertModel(BertConfig(**TINY)).embeddings.parameters())
    assert counts[0].flops >= 6 * non_embedding * 2 * 2 * 12
    assert counts[1].flops == pytest.approx(2 * counts[0].flops, rel=0.05)
    assert counts[1].activation_bytes > counts[0].activation_bytes > 0
    assert counts[0].training["global_batch_size"] == 1024  # the paper's
    # DAP's RTL head scores positions that the paper config pads to a multiple of 64: counted unpadded, its work
    # grows with the rows (padded, the probe's few rows would all be 64 positions, and the fit per row would miss it)
    dap = probe.count_steps("dap", cfg, Run("dap", "mbert", 1), (2, 4), manifest, tmp_path / "dap")
    assert dap[1].flops == pytest.approx(2 * dap[0].flops, rel=0.05) and dap[0].training["pad_scored_to"] == 1
    # the encoder saved as it starts: its parameters, and one rank's model states, no step
    from common.census.__main__ import _counted, shaped
    from common.census.measured import Mfu

    saved = probe.count_parameters("dap", cfg, Run("init", "mbert", 1), manifest, tmp_path / "init")
    assert saved.params == expected and saved.flops == saved.activation_bytes == 0
    row = shaped(_counted(saved), cfg["training"], "init", lambda rows, length: Mfu(0.3, "assumed"))
    assert (row["gpus"], row["gpus_from"]) == (1, "one rank")
    states = row["model_states_gib"]  # ZeRO 1 at one rank: fp32 weights, gradients, AdamW's 2 moments, buffers
    assert states["total"] == pytest.approx((4 + 4 + 8) * expected / 2**30 + states["zero_buffers"])
    assert row["activations_gib"] == row["flops_run"] == row["steps"] == 0
    assert row["memory_per_gpu_gib"] == pytest.approx(states["total"])
    # the TR job from its two counts: the tiny model's whole batch fits one GPU, so memory gives it one
    tr = shaped(_counted(counts[-1], counts, (2, 4)), cfg["training"], "tr", lambda rows, length: Mfu(0.3, "assumed"))
    assert (tr["gpus"], tr["gpus_from"], tr["micro_batch_per_gpu"], tr["accumulation_steps"]) == (1, "memory", 1024, 1)
    acts = est.Linear.through((2, 4), (counts[0].activation_bytes, counts[1].activation_bytes))
    assert tr["activations_gib"] * est.GIB == pytest.approx(acts.at(1024))
    paper = shaped(_counted(counts[-1], counts, (2, 4)), {**cfg["training"], "job_gpus": "paper"}, "tr",
                   lambda rows, length: Mfu(0.3, "assumed"))
    assert (paper["gpus"], paper["gpus_from"], paper["micro_batch_per_gpu"]) == (8, "paper", 128)
    assert paper["flops_run"] == pytest.approx(tr["flops_run"], rel=1e-3)  # the same work, on other GPUs


def test_paper_train_rules_and_preflight_read_the_census(tmp_path):
    from common.workflow import launch, preflight

    row = {"paper": "dap", "job": "xlmr/dap", "gpus": 8, "nodes": 1, "mem_mb": 100000, "runtime_minutes": 600,
           "memory_per_gpu_gib": 30.0}
    path = tmp_path / "paper.json"
    path.write_text(json.dumps({"jobs": [row, {**row, "job": "xlmr/tr", "memory_per_gpu_gib": 90.0},
                                         {"paper": "dap", "job": "mbert/tr", "error": "boom"}]}))
    cfg = {"scale": "paper", "training": {"gpus": 8}, "resources": {"train": {"mem_mb": 1, "runtime": 2}}}
    res = launch.train_resources(cfg, "dap", path)
    wc = SimpleNamespace(init="xlmr", method="dap")
    assert (res["mem_mb"](wc), res["runtime"](wc)) == (100000, 600)
    other = SimpleNamespace(init="mbert", method="tr")  # not counted: the config's figures
    assert (res["mem_mb"](other), res["runtime"](other)) == (1, 2)
    half = launch.train_resources({**cfg, "training": {"gpus": 4}}, "dap", path)  # the gpus override
    assert (half["mem_mb"](wc), half["runtime"](wc)) == (50000, 1200)
    assert launch.train_resources({**cfg, "scale": "rehearsal"}, "dap", path) == cfg["resources"]["train"]
    # a run that only saves its encoder: counted on one rank, run on one rank (not rescaled to the config's 8)
    saved = {**row, "job": "xlmr/init", "gpus": 1, "mem_mb": 9000, "runtime_minutes": 30}
    (tmp_path / "init.json").write_text(json.dumps({"jobs": [saved]}))
    res = launch.train_resources(cfg, "dap", tmp_path / "init.json")
    init = SimpleNamespace(init="xlmr", method="init")
    assert (res["mem_mb"](init), res["runtime"](init)) == (9000, 30)
    # the train rule's own mapping of a method name to its variant decides the ranks, as it decides the job's shape
    named = launch.train_resources(cfg, "dap", tmp_path / "init.json", job=lambda wc: "xlmr/init",
                                   variant=lambda wc: {"step0": "init"}[wc.method])
    assert (named["mem_mb"](SimpleNamespace(method="step0")), named["runtime"](SimpleNamespace(method="step0"))) == (
        9000, 30)
    fit = preflight.census_fit(launch.census_jobs("dap", path), "h100")
    assert not fit.ok and fit.missing == ["xlmr/tr: 90.0 GiB per GPU > 80 GiB (H100 SXM 80GB)"]
    assert not preflight.census_fit({}, None).ok


def test_the_committed_census_covers_every_paper_scale_job():
    """figures/census/paper.json has a counted row for each (init, method) of the four papers' run registries, for
    each NMT training job of HICTL's plan and for each (init, task) evaluated; every counted job fits an 80 GB GPU."""
    import importlib

    from common.census import shape
    from common.config import load_config
    from common.nmt import plan as nmt_plan
    from common.runs import saves_only
    from common.workflow.launch import CENSUS

    rows = json.loads(CENSUS.read_text())["jobs"]
    for paper in ("moco", "hictl", "vmsst", "dap"):
        cfg = load_config(paper, "paper")
        jobs = {f"{r.init}/{r.method}" for r in importlib.import_module(f"papers.{paper}.runs").registry(cfg)}
        if "nmt" in cfg:  # HICTL's fine-tuning jobs (common/census/nmt.py)
            jobs |= {f"nmt/{s}/{system}/{m}" for s, system, m in nmt_plan.training_jobs(cfg["nmt"])}
        jobs |= {f"eval/{r.init}/{t}" for r in importlib.import_module(f"papers.{paper}.runs").registry(cfg)
                 for t in r.tasks}  # every (encoder, task) of its evaluation (common/census/evaluation.py)
        jobs.add("corpus")  # its corpus job, on the host (common/census/corpus.py)
        counted = {r["job"] for r in rows if r["paper"] == paper and "error" not in r}
        assert jobs == counted, (paper, sorted(jobs - counted))
        corpus = next(r for r in rows if r["paper"] == paper and r["job"] == "corpus")
        assert corpus["mem_mb"] <= corpus["configured_mem_mb"], paper  # the held sample fits what it asked before
        training = [r for r in rows if r["paper"] == paper and r["job"].split("/")[0] in cfg["encoders"]]
        for r in training:  # the job that saves its encoder as it starts: one GPU and no step; every other, the
            # fewest GPUs whose memory holds its batch at one micro batch (common/census/shape.py), or the config's
            if saves_only(r["job"].split("/")[1]):
                assert (r["gpus"], r["steps"]) == (1, 0), r["job"]
                continue
            assert r["steps"] > 0, r["job"]
            if r.get("gpus_from") != "memory":
                assert r["gpus"] == cfg["training"]["gpus"], r["job"]
                continue
            fit = est.Linear(r["activation_fit"]["fixed"], r["activation_fit"]["per_row"])
            states = [sum(est.model_state_bytes(r["params"], r["trainable_params"], r["optimizer_bytes"],
                                                r["zero_stage"], n).values()) for n in (1, 2, 4, 8)]
            assert r["gpus"] == shape.memory_gpus(r["global_batch"], dict(zip((1, 2, 4, 8), states)).__getitem__,
                                                  fit.at, r["micro_batch_cap"]), r["job"]
            assert r["accumulation_steps"] == 1 and r["memory_per_gpu_gib"] * est.GIB <= shape.MEMORY_BYTES, r["job"]
        for r in (r for r in rows if r.get("kind") != "corpus"):  # a step too large for the machine that counted
            # it: its parameters are still counted
            assert "memory_per_gpu_gib" in r or (r["params"] > 0 and r["not_counted"].startswith("activations"))
            assert r.get("fits", {"a100": True})["a100"], r["job"]


def test_nmt_jobs_counted_from_fairseqs_own_model(tmp_path):
    """A tiny encoder through the recipe's own stage 1 / stage 2 arguments: stage 1 freezes the encoder (trainable:
    the decoder and output layer only) and skips its backward pass, FLOPs double with the sentences; a row's memory
    is fp32 weights + gradients + Adam's moments of the trainable parameters plus the activations of max_tokens."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    from common.census import nmt
    from common.models.tokenizer import SPECIAL_TOKENS, save_wordpiece
    from common.nmt.recipe import stage1_arguments, stage2_arguments
    from common.nmt.settings import NMTSettings

    enc = tmp_path / "encoder"
    BertModel(BertConfig(**TINY), add_pooling_layer=False).save_pretrained(enc)
    save_wordpiece(SPECIAL_TOKENS + [f"w{i}" for i in range(700 - len(SPECIAL_TOKENS))], enc)
    assert len(BertTokenizerFast.from_pretrained(enc)) == 700
    data = nmt.data_folder(tmp_path, 700, ["de", "en"])
    s = NMTSettings(max_tokens=256, tokens_per_update=1024, gpus=2, stage1_max_update=10, stage2_max_update=5)
    one = nmt.count(stage1_arguments(s, data, enc, tmp_path / "s1"))
    two = nmt.count(stage2_arguments(s, data, enc, tmp_path / "s1", tmp_path / "s2"))
    encoder_params = sum(p.numel() for p in BertModel(BertConfig(**TINY), add_pooling_layer=False).parameters())
    assert one.params == two.params == two.trainable_params and one.trainable_params == one.params - encoder_params
    assert one.flops[1] == pytest.approx(2 * one.flops[0], rel=0.02) and two.flops[0] > one.flops[0]
    row = nmt.row("nmt/x/hictl/stage1", "stage1", s, one, 0.3)
    acts = est.Linear.through(nmt.ROWS, tuple(one.activation_bytes)).at(256 / nmt.LENGTH)
    states = 4 * one.params + 4 * one.trainable_params + 8 * one.trainable_params
    assert row["memory_per_gpu_gib"] * est.GIB == pytest.approx(states + acts)
    assert (row["micro_batch_per_gpu"], row["accumulation_steps"], row["steps"], row["upper_bound"]) == (8, 2, 10, True)


def test_the_census_quotes_each_papers_compute_from_its_reported_yaml(tmp_path, monkeypatch):
    import common.census.__main__ as census
    from common.config import ConfigError

    assert census.reported_compute("dap") == ("8 V100 for 1 day (section 4.2)", 192.0)
    (tmp_path / "papers" / "new").mkdir(parents=True)
    (tmp_path / "papers" / "new" / "reported.yaml").write_text("source: a new paper\n")
    monkeypatch.setattr(census, "ROOT", tmp_path)
    with pytest.raises(ConfigError, match=r"papers/new/reported\.yaml: no 'compute: \{said"):
        census.reported_compute("new")


def test_a_measured_mfu_is_stated_beside_the_assumed_one(tmp_path):
    """The GPU acceptance's mfu.json (bench_mfu.py) becomes a sentence of the census; the CPU fallback's does not."""
    import json

    from common.census.__main__ import measured_mfu

    gpu = {"device": "NVIDIA H100 80GB HBM3", "precision": "bf16", "batch": 128, "max_length": 32,
           "peak_flops": 9.894e14,
           "variants": {"TR": {"mfu": 0.0567}, "DAP": {"mfu": 0.0784}}}
    for name, record in (("h100", gpu), ("cpu", {**gpu, "device": "cpu"})):
        (tmp_path / name).mkdir()
        (tmp_path / name / "mfu.json").write_text(json.dumps(record))
    [sentence] = measured_mfu(tmp_path)
    assert "H100 80GB HBM3" in sentence and "TR 5.7 %, DAP 7.8 %" in sentence and "128 pairs per GPU" in sentence
    assert "1 run)" in sentence
    second = {**gpu, "variants": {"TR": {"mfu": 0.0801}, "DAP": {"mfu": 0.0621}}}
    (tmp_path / "h100" / "mfu-2.json").write_text(json.dumps(second))
    [sentence] = measured_mfu(tmp_path)
    assert "TR 5.7-8.0 %, DAP 6.2-7.8 %" in sentence and "2 runs)" in sentence


def test_the_probe_counts_attention_as_a_gpu_runs_it():
    """Attention dropout off while counting (common/census/probe.py ``attention_dropout_off``): the CPU then runs its
    fused attention kernel, as a GPU runs its own with dropout, and keeps no (S x S) score matrices; its FLOPs are
    those torch counts for the GPU's fused kernels (the decomposed path counts a little less: the fused backward
    computes the scores again); hidden dropout stays on."""
    import torch
    from transformers import BertConfig, BertModel

    from common.census import flops
    from common.census.probe import attention_dropout_off, saved_activation_bytes

    def count(attention_dropout: float, off: bool):
        torch.manual_seed(0)
        model = BertModel(BertConfig(vocab_size=50, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                     intermediate_size=64, attention_probs_dropout_prob=attention_dropout)).train()
        if off:
            assert attention_dropout_off(model) == 2  # one self-attention per layer
        ids = torch.randint(1, 50, (4, 24), generator=torch.Generator().manual_seed(1))
        with flops.counter() as counter:
            kept, out = saved_activation_bytes(model, lambda: model(input_ids=ids).last_hidden_state)
            out.sum().backward()
        return kept, counter.get_total_flops()

    (plain, plain_flops), (off, off_flops), (dropped, dropped_flops) = (count(0.0, False), count(0.1, True),
                                                                        count(0.1, False))
    assert off == plain and off_flops == plain_flops and 0.95 < dropped_flops / off_flops < 1
    assert dropped > off  # the decomposed path's scores, softmax and masks, 3 x 4 heads x 24 x 24 per layer and row
