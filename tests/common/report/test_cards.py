"""A saved model's card gains its evaluation results with their intervals when the report reads them."""
import json

from common.eval.results import write_result
from common.models import card
from common.report.cards import update_cards
from common.report.context import ReportContext
from common.report.results import ResultStore
from common.runs import Run, RunRegistry


def facts(tmp_path):
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"kind": "synthetic", "train": {}, "leakage": {"dropped_total": 0}}))
    resolved = {"paper": "dap", "experiment": "dap", "n_examples": 0, "method": {},
                "run": {"method": "tr", "seed": 2, "init": "scratch", "scale": "smoke", "corpus": str(manifest)},
                "config": {"encoders": {"scratch": {"hidden_size": 8}}, "training": {"max_steps": 1}}}
    return card.training_facts(resolved, "Li et al. 2023 (DAP), ACL", ["Transformer", "Pooling(mean)"],
                               "sentence-encoder", "abc", {"python": "3"})


def test_the_report_adds_each_result_with_its_interval_over_the_test_items(tmp_path):
    model = tmp_path / "models" / "scratch" / "tr" / "seed2" / "model"
    model.mkdir(parents=True)
    card.write_card(model, facts(tmp_path))
    assert "Not evaluated yet" in (model / "README.md").read_text()
    scores = {"items": {"deu": {"xx2en": "1111", "en2xx": "1100"}}, "main_score": 75.0}
    write_result(tmp_path / "eval" / "scratch" / "tr" / "seed2" / "tatoeba@cosine.json", task="tatoeba@cosine",
                 split="test", languages=["deu"], scores=scores, model={}, scale="smoke", seed=2, config={},
                 data_files=[], evaluation_time=0.0)
    registry = RunRegistry("dap", [Run("tr", "scratch", 2, ("tatoeba@cosine",))])
    ctx = ReportContext("dap", "smoke", {}, ResultStore(tmp_path, registry), {}, {}, tmp_path)
    assert update_cards(ctx) == 1
    entry = json.loads((model / "card.json").read_text())["results"]["tatoeba@cosine"]
    assert entry["main_score"] == 75.0 and entry["lo"] < 75.0 < entry["hi"]
    row = f"| tatoeba@cosine | 75.00 | [{entry['lo']:.2f}, {entry['hi']:.2f}] |"
    text = (model / "README.md").read_text()
    assert row in text and "# tr (Li et al. 2023 (DAP), ACL), seed 2" in text


def test_a_result_without_items_gets_no_interval_and_a_valid_card(tmp_path):
    """A task type without an item-level metric (here a results JSON with no ``items``) has no interval: the card
    stores ``null`` (JSON has no NaN, and a NaN is refused on write) and its README shows a dash."""
    model = tmp_path / "models" / "scratch" / "tr" / "seed2" / "model"
    model.mkdir(parents=True)
    card.write_card(model, facts(tmp_path))
    write_result(tmp_path / "eval" / "scratch" / "tr" / "seed2" / "tatoeba@cosine.json", task="tatoeba@cosine",
                 split="test", languages=["deu"], scores={"main_score": 40.0}, model={}, scale="smoke", seed=2,
                 config={}, data_files=[], evaluation_time=0.0)
    registry = RunRegistry("dap", [Run("tr", "scratch", 2, ("tatoeba@cosine",))])
    ctx = ReportContext("dap", "smoke", {}, ResultStore(tmp_path, registry), {}, {}, tmp_path)
    assert update_cards(ctx) == 1
    entry = json.loads((model / "card.json").read_text())["results"]["tatoeba@cosine"]
    assert entry["main_score"] == 40.0 and entry["lo"] is None and entry["hi"] is None
    assert "| tatoeba@cosine | 40.00 | – |" in (model / "README.md").read_text()
