import pytest

from common.config import SCALES, ConfigError, load_paper_config, workflow_config


def test_defaults_and_validation():
    cfg = workflow_config({})
    assert cfg["scale"] == "smoke" and cfg["data_root"]
    with pytest.raises(ConfigError, match="'scal' was unexpected"):
        workflow_config({"scal": "mini"})
    with pytest.raises(ConfigError, match="at 'scale'.*'huge' is not one of"):
        workflow_config({"scale": "huge"})


@pytest.mark.parametrize("paper", ["dap", "moco", "vmsst", "hictl"])
@pytest.mark.parametrize("scale", SCALES)
def test_paper_configs_valid(paper, scale):
    cfg = load_paper_config(paper, scale)
    assert cfg["scale"] == scale


def test_a_config_extends_one_that_extends_another_and_a_cycle_is_refused(tmp_path):
    """``ci`` extends ``rehearsal``, which extends ``paper``: each file's keys over the one it extends."""
    from common.config import _load_config_file

    (tmp_path / "paper.yaml").write_text("scale: paper\ntraining: {max_steps: 100, gpus: 8}\nseeds: [1, 2]\n")
    (tmp_path / "rehearsal.yaml").write_text("extends: paper\nscale: rehearsal\ntraining: {max_steps: 8}\n")
    (tmp_path / "ci.yaml").write_text("extends: rehearsal\nscale: ci\nseeds: [1]\n")
    assert _load_config_file(tmp_path / "ci.yaml") == {"scale": "ci", "training": {"max_steps": 8, "gpus": 8},
                                                       "seeds": [1]}
    (tmp_path / "paper.yaml").write_text("extends: ci\nscale: paper\n")
    with pytest.raises(ConfigError, match=r"paper\.yaml: extends 'ci', which extends it in turn"):
        _load_config_file(tmp_path / "ci.yaml")
    (tmp_path / "ci.yaml").write_text("extends: huge\n")
    with pytest.raises(ConfigError, match=r"ci\.yaml: extends 'huge', but .*huge\.yaml does not exist"):
        _load_config_file(tmp_path / "ci.yaml")


def test_paper_config_unknown_key(tmp_path, monkeypatch):
    import common.config as c

    (tmp_path / "papers" / "dap" / "config").mkdir(parents=True)
    (tmp_path / "config").mkdir()  # the shared definitions, read here where no earlier test has read them
    (tmp_path / "config" / "defs.yaml").write_text((c.ROOT / "config" / "defs.yaml").read_text())
    src = c.ROOT / "papers" / "dap" / "config"
    (tmp_path / "papers" / "dap" / "config" / "schema.yaml").write_text((src / "schema.yaml").read_text())
    text = (src / "smoke.yaml").read_text().replace("rtl_weight: 1.0", "rtl_weight: 1.0, rtl_wieght: 0.1")
    (tmp_path / "papers" / "dap" / "config" / "smoke.yaml").write_text(text)
    monkeypatch.setattr(c, "ROOT", tmp_path)
    with pytest.raises(ConfigError, match=r"smoke\.yaml: at 'dap': Additional properties .*'rtl_wieght'"):
        c.load_paper_config("dap", "smoke")


def test_a_key_given_twice_is_refused_with_the_file_and_line(tmp_path):
    """PyYAML keeps the last of two equal keys: a second ``training:`` block would silently drop the first."""
    from common.config import load_yaml

    path = tmp_path / "mini.yaml"
    path.write_text("scale: mini\ntraining: {max_steps: 600}\nseeds: [1]\ntraining: {max_steps: 10}\n")
    with pytest.raises(ConfigError, match=r"mini\.yaml:4: key 'training' given twice in one mapping \(first at line 2"):
        load_yaml(path)
    path.write_text("a: {b: 1, c: {d: 2, d: 3}}\n")  # nested, in flow style
    with pytest.raises(ConfigError, match=r"mini\.yaml:1: key 'd' given twice"):
        load_yaml(path)
    path.write_text("a: !replace {b: 1}\nc: {b: 1}\n")  # the same key in two mappings is fine
    assert load_yaml(path) == {"a": {"b": 1}, "c": {"b": 1}}
    path.write_text("base: &b {x: 1, y: 2}\nother: {<<: *b, y: 3}\n")  # a merge key is no repeat; later keys win
    assert load_yaml(path)["other"] == {"x": 1, "y": 3}
    path.write_text("? [1, 2]\n: 3\n")
    with pytest.raises(ConfigError, match=r"mini\.yaml:1: a key that is not a scalar"):
        load_yaml(path)


@pytest.mark.parametrize("scale", ["smoke", "mini"])
def test_sequence_lengths_fit_from_scratch_encoders(scale):
    from common.eval.tasks import get_task

    cfg = load_paper_config("dap", scale)
    xnli = get_task("xnli@zero-shot").params_for(scale)["max_length"]
    for spec in cfg["encoders"].values():
        if spec.get("pretrained"):
            continue
        longest = max(cfg["training"]["max_length"], cfg["eval"]["max_length"], xnli,
                      2 * cfg["training"]["max_length"])  # TLM reads x (+) y
        assert longest <= spec["max_position"]


def test_a_paper_on_another_papers_recipe_reads_its_own_config_in_the_recipes_shape():
    """A paper declared on DAP's recipe (tests/test_toy_paper.py) trains with its own config, checked by DAP's
    schema too; anything else is an unknown experiment."""
    from common.config import load_experiment_config

    assert load_experiment_config("dap", "dap", "smoke") == load_paper_config("dap", "smoke")
    with pytest.raises(ConfigError, match=r"moco/config/smoke\.yaml \(read by dap's recipe\): at '<top>'"):
        load_experiment_config("moco", "dap", "smoke")  # MoCo-BERT's config is not in DAP's shape
    with pytest.raises(ConfigError, match="unknown experiment 'nonesuch'"):
        load_experiment_config("nonesuch", "dap", "smoke")


def test_leaderboard_seeds_from_the_command_line_are_integers():
    """`--config leaderboard_seeds=[1,2]` gives Snakemake's strings '1' and '2': read as seeds 1 and 2; a seed that is
    no integer is still refused by the schema."""
    assert workflow_config({"leaderboard_seeds": ["1", "2"]})["leaderboard_seeds"] == [1, 2]
    with pytest.raises(ConfigError, match="leaderboard_seeds/0"):
        workflow_config({"leaderboard_seeds": ["one"]})
