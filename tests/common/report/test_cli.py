"""The report command line (common/report/cli.py): what it adds to every paper's report from the config."""
from common.report import cli, curves


def test_only_the_pretraining_report_adds_the_learning_curve(monkeypatch, tmp_path):
    """HICTL's NMT report is a report of its own: it once drew the pre-training learning curve too, from results that
    are not among its inputs."""
    indexed, drawn = [], []
    monkeypatch.setattr(cli, "ResultStore", lambda *args: None)
    monkeypatch.setattr(cli, "load_manifest", lambda path: {})
    monkeypatch.setattr(curves, "learning_curve_figure", lambda ctx, out: drawn.append(out) or [])
    monkeypatch.setattr(cli, "write_index", lambda out, target, title, scale, rendered, figures:
                        indexed.append(figures) or out / "README.md")
    cfg = {"encoders": {"scratch": {}}, "learning_curve": {"methods": ["tr"], "steps": [10], "task": "tatoeba@cosine"}}
    argv = ["--scale", "smoke", "--results", str(tmp_path), "--corpus", "-", "--out", str(tmp_path / "out")]
    for pretraining in (True, False):
        cli.main("toy", "Toy", lambda scale: dict(cfg), lambda c: None, lambda ctx: ([], {}), None, argv=argv,
                 pretraining=pretraining)
    assert indexed == [[curves.FIGURE], []] and len(drawn) == 1
