from common.config import load_experiment_config, load_leaderboard_config
from common.leaderboard.methods import METHODS, registry


def test_one_registry_for_every_method_with_the_tasks_that_apply():
    cfg = load_leaderboard_config("smoke")
    reg = registry(cfg)
    assert [r.method for r in reg] == cfg["methods"] and reg.inits() == ["scratch"]
    assert "xnli@zero-shot" in reg.get("dap", "scratch", 1).tasks
    assert "xnli@zero-shot" not in reg.get("moco", "scratch", 1).tasks  # language-specific encoders
    assert all(METHODS[m].paper in cfg["papers"] for m in cfg["methods"])


def test_every_method_trains_with_the_shared_budget():
    for scale in ("smoke", "mini", "paper"):
        board = load_leaderboard_config(scale)
        for paper in {METHODS[m].paper for m in board["methods"]}:
            cfg = load_experiment_config("leaderboard", paper, scale)  # validated by the paper's own schema
            assert cfg["training"] == board["training"] and cfg["encoders"] == board["encoders"]
            assert cfg["seeds"] == board["seeds"] and cfg["corpus"] == board["corpus"]


def test_the_initial_encoder_is_one_untrained_run():
    """The mini and paper leaderboards start with the encoder every method starts from: DAP's ``init`` variant (no
    step taken), on the first seed only."""
    from papers.dap.variants import resolve

    for scale in ("mini", "paper"):
        cfg = load_leaderboard_config(scale)
        runs = [r for r in registry(cfg) if r.method == "init"]
        assert [r.seed for r in runs] == cfg["seeds"][:1] and len(cfg["seeds"]) > 1
        assert resolve(METHODS["init"].variant, cfg["papers"]["dap"]["dap"])["train"] is False
