import pytest

from common.report.context import ReportContext
from common.report.results import ResultStore
from papers.dap.report import claims
from papers.dap.runs import registry
from tests.results import write_scores


@pytest.mark.parametrize("pretrained", [False, True])
def test_claims_give_intervals_and_verdicts(tmp_path, pretrained):
    """Hand-made results with known answers. DAP is right on every German Tatoeba sentence where TR, TR+TLM and the
    initial encoder are wrong on every one, and all are equal on Chinese: the Latin-script row is +100 [100, 100]
    (holds), the trained-languages row +50 [50, 50] (German and Chinese). XNLI outcomes are identical (0:
    inconclusive); DAP finds none of the BUCC gold pairs the baselines find (reversed). A pretrained initial encoder
    is evaluated on the first seed only, and that result stands for both seeds; one from scratch draws its weights on
    the seed, so only DAP's first seed is paired with it."""
    encoder = {"pretrained": "minilm"} if pretrained else {}
    cfg = {"description": "Toy pairs.", "encoders": {"minilm": encoder}, "seeds": [1, 2], "ablations": {},
           "ablation_seed": 1,
           "dap": {"direction": "xx2en", "rho": 1.0, "rtl_layers": 2}}

    def put(method, seed, deu, tp):
        d = tmp_path / "eval" / "minilm" / method / f"seed{seed}"
        write_scores(d / "tatoeba@cosine.json", {"scores": {
            "items": {"deu": {"xx2en": deu, "en2xx": deu}, "cmn": {"xx2en": "0110", "en2xx": "1010"}},
            "groups": {"36": {"both": None}, "all": {"both": 0.0}, "trained_latin": {"n_languages": 1}},
            "trained_languages": ["cmn", "deu"]}})
        write_scores(d / "bucc@ratio-k4.json", {"scores": {"per_pair": {"de-en": {"test_items": {
            "gold": "0111", "tp": tp, "fp": "1000"}}}}})
        write_scores(d / "xnli@zero-shot.json", {"scores": {"items": {"en": "1100", "de": "1010"},
                                                          "clusters": [0, 0, 1, 1]}})

    for seed in (1, 2):
        put("tr", seed, "0000", "0111")
        put("tr_tlm", seed, "0000", "0111")
        put("dap", seed, "1111", "0000")
    put("init", 1, "0000", "0111")  # the registry runs the initial encoder on the first seed only
    ctx = ReportContext("dap", "mini", cfg, ResultStore(tmp_path, registry(cfg)),
                        {"leakage": {"dropped_total": 3}}, {}, tmp_path)
    table = claims(ctx)
    assert table.notes[0] == ("Ours: scale 'mini' — Toy pairs. Seeds [1, 2] (mean). "
                              "Leakage rule dropped 3 training pairs.")  # which data trained the models
    rows = {(r[0], r[2]): r for r in table.rows}
    latin = rows[("DAP > TR", "Tatoeba, Latin-script languages with training data")]
    assert (latin[8], latin[9], latin[11], latin[12]) == (100.0, "[100.0, 100.0]", 2, "holds")
    trained = rows[("DAP > TR+TLM", "Tatoeba, languages with training data")]
    assert (trained[8], trained[9], trained[12]) == (50.0, "[50.0, 50.0]", "holds")
    initial = rows[("DAP above the encoder it starts from", "Tatoeba, Latin-script languages with training data")]
    assert (initial[8], initial[9], initial[11], initial[12]) == (
        (100.0, "[100.0, 100.0]", 2, "holds") if pretrained else (100.0, "[100.0, 100.0]", 1, "holds on 1 seed"))
    assert rows[("DAP > TR", "XNLI accuracy")][12] == "inconclusive"
    bucc = rows[("DAP > TR", "BUCC test F1")]
    assert bucc[5].mean == pytest.approx(200 * 3 / (3 + 1 + 3)) and bucc[7].mean == 0.0 and bucc[12] == "reversed"


def test_table1_shows_what_a_training_source_adds(tmp_path):
    """Rows by training source (the languages of each source, those of one source alone) and TR / DAP
    trained without a source, on the ablation seed, Tatoeba only; worked out by hand from per-language accuracies."""
    from papers.dap.report import table1

    cfg = {"description": "d", "encoders": {"minilm": {}}, "seeds": [1], "ablations": {}, "ablation_seed": 1,
           "without_sources":
           {"anki_pairs": ["tr", "dap"]}, "dap": {"direction": "xx2en", "rho": 1.0, "rtl_layers": 2}}
    manifest = {"train_languages": ["kat", "spa", "tur"], "leakage": {"dropped_total": 0},
                "train_sources": {"spa": [["multi30k", 3], ["anki_pairs", 2]], "tur": [["anki_pairs", 4]],
                                  "kat": [["ntrex128", 5]]}}
    reg = registry(cfg)
    assert [(r.method, r.tasks) for r in reg if "_no-" in r.method] == [
        ("tr_no-anki_pairs", ("tatoeba@cosine",)), ("dap_no-anki_pairs", ("tatoeba@cosine",))]
    for r in reg:
        acc = {"init": 10.0, "tr": 40.0, "tr_tlm": 30.0, "dap": 50.0}.get(r.method, 20.0)
        per = {"spa": acc, "tur": acc + 10, "kat": 4.0}  # xx->en; en->xx is 1 point lower
        group = {"n_languages": 3, "xx2en": 1.0, "en2xx": 1.0}
        write_scores(tmp_path / "eval" / "minilm" / r.method / f"seed{r.seed}" / "tatoeba@cosine.json", {"scores": {
            "per_language": {k: {"xx2en": v, "en2xx": v - 1} for k, v in per.items()},
            "groups": {g: group for g in ("14", "28", "36", "all", "trained", "trained_latin")}}})
    ctx = ReportContext("dap", "mini", cfg, ResultStore(tmp_path, reg), manifest, {"table1_tatoeba": {
        "xx2en": {}, "en2xx": {}}}, tmp_path)
    rows = {(r[0], r[1], r[2]): r[3] for r in table1(ctx).rows}
    assert rows[("xx→en", "minilm+TR", "anki_pairs (2)")] == 45.0  # (40 + 50) / 2
    assert rows[("en→xx", "minilm+DAP", "anki_pairs alone (1)")] == 59.0  # tur only, en->xx
    assert rows[("xx→en", "minilm (no pre-training)", "ntrex128 alone (1)")] == 4.0
    assert rows[("xx→en", "minilm+TR without anki_pairs", "anki_pairs (2)")] == 25.0  # (20 + 30) / 2
    assert rows[("xx→en", "minilm+DAP without anki_pairs", "all (3)")] == 1.0
    assert "'without <source>' rows" in " ".join(table1(ctx).notes)


@pytest.mark.parametrize("target, expected", [
    ("all", ["table1_tatoeba", "table2_bucc_training", "table3_bucc_test", "table4_xnli", "table6_efficiency",
             "table7_xx2en", "table8_en2xx", "claims"]),
    ("section5", ["figure1_tokens", "table5_direction", "figure3_rho", "figure4_depth"]),
])
def test_a_report_builds_only_its_targets_outputs(monkeypatch, tmp_path, target, expected):
    """Mini's split (papers/dap/config/mini.yaml): each target's report builds its own tables and figures, in the
    paper's order, and reads nothing another target writes (every table function records the call)."""
    from common.config import load_paper_config
    from common.report.tables import Table
    from papers.dap import report

    built = []

    def fake(name, figure=False):
        def make(ctx, *args):
            key = name if name != "ablation" else args[1]
            built.append(key)
            table = Table(key, key, ["x"], [], [])
            return (table, {key: None}) if figure or name == "ablation" else table
        return make

    for fn in ("table1", "table4", "table5", "table6", "claims"):
        monkeypatch.setattr(report, fn, fake({"table1": "table1_tatoeba", "table4": "table4_xnli",
                                              "table5": "table5_direction", "table6": "table6_efficiency",
                                              "claims": "claims"}[fn]))
    monkeypatch.setattr(report, "bucc_table", lambda ctx, key, *a: fake(key)(ctx))
    monkeypatch.setattr(report, "per_language", lambda ctx, d, key, title: fake(key)(ctx))
    monkeypatch.setattr(report, "ablation_figure", fake("ablation"))
    monkeypatch.setattr(report, "figure1_output", fake("figure1_tokens", figure=True))
    cfg = load_paper_config("dap", "mini")
    ctx = ReportContext("dap", "mini", cfg, None, {}, {}, tmp_path, target)
    tables, figures = report.build(ctx)
    assert built == [t.name for t in tables] == expected
    assert sorted(figures) == sorted(name for name in expected if name.startswith("figure"))
