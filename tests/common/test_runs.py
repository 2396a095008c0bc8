import pytest

from common.runs import Run, RunRegistry


def test_registry_merges_tasks_and_lists_seeds():
    reg = RunRegistry("x", [Run("a", "i", 1, ("t1", "t2")), Run("a", "i", 2, ("t1", "t2")), Run("b", "i", 1, ("t1",))])
    reg.add(Run("a", "i", 1, ("t2", "t3")))  # the same run registered again (an ablation point that is the main run)
    assert len(reg) == 3 and reg.get("a", "i", 1).tasks == ("t1", "t2", "t3")
    assert reg.seeds("a", "i") == [1, 2] and reg.inits() == ["i"]
    assert reg.evaluations()[:3] == [(reg.get("a", "i", 1), "t1"), (reg.get("a", "i", 1), "t2"),
                                     (reg.get("a", "i", 1), "t3")]
    assert Run("a", "i", 2).key == "i/a/seed2"
    with pytest.raises(KeyError, match="no run of method 'c'"):
        reg.seeds("c", "i")


def test_paper_registries_derive_every_run_once():
    from common.config import load_paper_config
    from papers.dap.runs import registry as dap
    from papers.moco.runs import registry as moco

    reg = dap(load_paper_config("dap", "paper"))
    # 2 encoders x 3 methods x 3 seeds, each encoder without pre-training (seed 1), 8 ablations
    assert len(reg) == 2 * 3 * 3 + 2 + 8 and reg.seeds("dap", "mbert") == [1, 2, 3] and reg.seeds("init", "xlmr") == [1]
    assert reg.seeds("dap_k-1", "mbert") == [1]
    reg = moco(load_paper_config("moco", "paper"))
    assert len(reg) == 14 and [r.method for r in reg if "moco-tsne" in r.tasks] == ["moco"]


def test_mini_claims_compare_enough_seeds():
    """Every run a claim compares is trained with several seeds at mini scale, so that a claim's comparison has a
    spread (3 for DAP, whose runs take over 10 minutes; 5 for MoCo-BERT, whose runs take under 10 at 800 steps:
    papers/moco/README.md); the others with one."""
    from common.config import load_paper_config
    from papers.dap.runs import registry as dap
    from papers.moco.runs import claim_runs
    from papers.moco.runs import registry as moco

    reg = dap(load_paper_config("dap", "mini"))
    assert all(reg.seeds(m, "minilm") == [1, 2, 3] for m in ("tr", "tr_tlm", "dap"))
    # the run without a source and the section 5 ablations (a target of their own) are ablations: one seed
    assert reg.seeds("tr_no-anki_pairs", "minilm") == [1] and reg.seeds("dap_k-1", "minilm") == [1]
    cfg = load_paper_config("moco", "mini")
    reg = moco(cfg)
    compared = claim_runs(cfg)
    assert {"moco", "inbatch"} <= compared
    assert all(len(reg.seeds(r.method, r.init)) == (5 if r.method in compared else 1) for r in reg)


def test_a_jobs_gpus_follow_training_job_gpus():
    """``memory``: the census's count for the job, on one node (the config's where it has none); ``paper``: the
    config's ``gpus`` and ``nodes``; an integer: that many per node; a run that only saves its encoder: one."""
    from common.runs import gpus_source, placement

    paper = {"gpus": 8, "nodes": 2}
    assert placement({**paper, "job_gpus": "memory"}, "tr", 2) == (2, 1)
    assert placement({**paper, "job_gpus": "memory"}, "tr", None) == (8, 2)
    assert gpus_source({**paper, "job_gpus": "memory"}, None) == "paper"
    assert placement(paper, "tr", 2) == placement({**paper, "job_gpus": "paper"}, "tr", 2) == (8, 2)
    assert placement({**paper, "job_gpus": 4}, "tr", 2) == (4, 2) and gpus_source({"job_gpus": 4}, 2) == "config"
    assert placement({**paper, "job_gpus": "memory"}, "init", 2) == (1, 1)
    with pytest.raises(ValueError, match="training.job_gpus: 'fewest'"):
        placement({**paper, "job_gpus": "fewest"}, "tr")


def test_each_evaluation_belongs_to_the_targets_it_was_registered_for():
    """A run registered under two targets (the main run that is also an ablation's default point) is in both; a task
    added for one target only (a figure's) is in that one alone; a run evaluated on nothing is the main target's."""
    reg = RunRegistry("x", [Run("a", "i", 1, ("t1",)), Run("c", "i", 1)])
    reg.add(Run("a", "i", 1, ("t1", "fig")), "extra")
    reg.add(Run("b", "i", 1, ("t1",)), "extra")
    a, b, c = reg.get("a", "i", 1), reg.get("b", "i", 1), reg.get("c", "i", 1)
    assert reg.targets() == ["all", "extra"]
    assert reg.evaluations("all") == [(a, "t1")]
    assert reg.evaluations("extra") == [(a, "t1"), (a, "fig"), (b, "t1")]
    assert reg.evaluations() == [(a, "t1"), (a, "fig"), (b, "t1")]
    assert reg.runs("all") == [a, c] and reg.runs("extra") == [a, b] and reg.runs() == [a, c, b]


def test_dap_mini_splits_section5_and_figure1_into_their_own_target():
    """DAP's mini config gives Figure 1, Table 5 and Figures 3-4 the target section5: their runs (four ablations, the
    main DAP run on the ablation seed as their default point, Figure 1's three models on its task) are its own, and the
    main target keeps every other evaluation, as before the split."""
    from common.config import load_paper_config
    from papers.dap.runs import registry as dap

    cfg = load_paper_config("dap", "mini")
    reg = dap(cfg)
    section5 = reg.evaluations("section5")
    assert {r.method for r in reg.runs("section5")} == {"init", "tr", "dap", "dap_dir-en2xx", "dap_dir-both",
                                                          "dap_rho-0.5", "dap_k-1"}
    assert sorted(r.method for r, t in section5 if t == "dap-tokens") == ["dap", "init", "tr"]
    assert all(r.seed == cfg["ablation_seed"] for r, _ in section5) and len(section5) == 3 + 5 * 3
    main = reg.evaluations("all")
    assert not any(r.method.startswith(("dap_dir", "dap_rho", "dap_k")) or t == "dap-tokens" for r, t in main)
    assert len(main) == 3 * 3 * 2 + 3 + 3 + 2  # Tatoeba and BUCC on 3 seeds, XNLI on one, init, two without Anki
    assert {(r.key, t) for r, t in main} | {(r.key, t) for r, t in section5} == {(r.key, t) for r, t in
                                                                               reg.evaluations()}
