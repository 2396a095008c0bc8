"""VMSST's run list per scale (papers/vmsst/runs.py) and the step-0 model every setting starts from (what
training adds); the mini scale trains Table 1 only, and its tables and claims say what is not run."""
import yaml

from common.config import load_paper_config
from papers.vmsst.report import HERE
from papers.vmsst.runs import registry
from papers.vmsst.variants import resolve


def test_the_step_0_run_is_vmssts_own_model_with_no_update():
    cfg = load_paper_config("vmsst", "mini")
    settings, overrides, languages = resolve("init", cfg, "l2", 2)
    assert (settings, languages) == resolve("vmsst", cfg, "l2", 2)[::2]
    assert overrides == {"max_steps": 0} and resolve("vmsst", cfg, "l2", 2)[1] == {}


def test_mini_trains_table_1_with_every_compared_run_on_four_seeds():
    reg = registry(load_paper_config("vmsst", "mini"))
    runs = {(r.method, r.init): reg.seeds(r.method, r.init) for r in reg}
    for init in ("l2", "l4"):
        for method in ("init", "contrastive", "bitranslation", "vmsst"):
            assert runs.pop((method, init)) == [1, 2, 3, 4], (method, init)
        assert runs.pop(("vmsst_contrastive", init)) == [1]
    assert runs == {}  # no Table 4, 6 or 7 run at mini


def test_tables_not_run_keep_the_papers_rows_and_say_why_and_their_claims_are_not_declared():
    from types import SimpleNamespace

    from papers.vmsst.claims import declare
    from papers.vmsst.report import table4, table6, table7

    cfg = load_paper_config("vmsst", "mini")
    reported = yaml.safe_load((HERE / "reported.yaml").read_text())
    manifest = {"kind": "mini", "leakage": {"dropped_total": 0}, "question_retrieval": {"description": "q"}}
    ctx = SimpleNamespace(scale="mini", cfg=cfg, manifest=manifest, reported=reported, store=None)
    t4, t6, t7 = table4(ctx), table6(ctx), table7(ctx)
    assert {r[1] for r in t4.rows} == {"paper"} and len(t4.rows) == len(reported["table4_ablations"])
    assert any("the ablations not run at scale 'mini' (tables.ablations is empty" in n for n in t4.notes)
    for t in (t4, t6, t7):  # no seeds claimed for a table without our rows
        assert "No run of ours here. " in t.notes[0] and "Seeds [" not in t.notes[0] and "seed 1" not in str(t.notes)
    assert {r[1] for r in t6.rows} == {"paper"} and len(t6.rows) == len(reported["table6"])
    assert {r[3] for r in t7.rows} == {"paper"}
    assert len(t7.rows) == sum(len(b) for m in reported["table7"].values() for b in m.values())
    for t, key in ((t6, "table6_languages"), (t7, "batch_inits")):
        assert any(f"not run at scale 'mini' (tables.{key} is empty: its budget goes to Table 1's runs" in n
                   for n in t.notes), key
    ids = {c.id for c in declare(cfg)}
    assert not any(i.startswith(("table6.", "batch.", "ablation.")) for i in ids)
    assert {"above-initial.score.l2", "above-initial.tatoeba.l2", "above-initial.score.l4",
            "above-initial.tatoeba.l4", "best-score.bitranslation.l4"} <= ids
