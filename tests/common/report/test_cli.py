"""The report command line (common/report/cli.py): what it adds to every paper's report from the config."""
from functools import partial

import pytest

from common.report import cli, curves
from common.report.tables import Table


def test_only_the_pretraining_report_adds_the_learning_curve(monkeypatch, tmp_path):
    """HICTL's NMT report is a report of its own: it once drew the pre-training learning curve too, from results that
    are not among its inputs."""
    indexed, drawn = [], []
    monkeypatch.setattr(cli, "ResultStore", lambda *args: None)
    monkeypatch.setattr(cli, "load_manifest", lambda path: {})
    monkeypatch.setattr(curves, "learning_curve_figure", lambda ctx, out: drawn.append(out) or [])
    monkeypatch.setattr(cli, "write_index", lambda out, target, title, scale, rendered, figures, others:
                        indexed.append(figures) or out / "README.md")
    cfg = {"encoders": {"scratch": {}}, "learning_curve": {"methods": ["tr"], "steps": [10], "task": "tatoeba@cosine"}}
    argv = ["--scale", "smoke", "--results", str(tmp_path), "--corpus", "-", "--out", str(tmp_path / "out")]
    for pretraining in (True, False):
        cli.main("toy", "Toy", lambda scale: dict(cfg), lambda c: None, lambda ctx: ([], {}), None, argv=argv,
                 pretraining=pretraining)
    assert indexed == [[curves.FIGURE], []] and len(drawn) == 1


def test_a_target_of_its_own_writes_its_outputs_and_the_main_target_the_index(monkeypatch, tmp_path):
    """With ``targets`` in the config, ``--target section5`` writes that target's tables and figures only, and no
    README; the main target writes the rest and the README, which links the other target's outputs."""
    monkeypatch.setattr(cli, "ResultStore", lambda *args: None)
    monkeypatch.setattr(cli, "load_manifest", lambda path: {})
    cfg = {"encoders": {"scratch": {}}, "targets": {"section5": ["table5", "figure3"]}}

    def draw(name, out):
        (out / f"{name}.png").write_bytes(b"")
        return [out / f"{name}.png"]

    def build(ctx):  # a build that leaves nothing out: the command line keeps its target's outputs only
        return [Table(n, n, ["x"], [["1"]], []) for n in ("table1", "table5")], {
            n: partial(draw, n) for n in ("figure1", "figure3")}

    def run(target):
        out = tmp_path / target
        argv = ["--scale", "mini", "--results", str(tmp_path), "--corpus", "-", "--out", str(out), "--target", target]
        cli.main("toy", "Toy", lambda scale: dict(cfg), lambda c: None, build, None, argv=argv, pretraining=False)
        return sorted(p.name for p in out.iterdir())

    assert run("section5") == ["figure3.png", "table5.csv", "table5.md", "table5.tex"]
    assert run("all") == ["README.md", "figure1.png", "table1.csv", "table1.md", "table1.tex"]
    assert "- `snakemake papers/toy/section5 --config scale=mini`: [table5](table5.md), [figure3](figure3.md)" in (
        tmp_path / "all" / "README.md").read_text()
    with pytest.raises(SystemExit, match="has the targets"):
        run("nmt")
