"""DAP's claims carry the paper's own numbers (papers/dap/reported.yaml), worked out by hand."""
from common.config import load_config
from papers.dap.claims import declare


def reported(scale: str) -> dict[str, str]:
    return {c.id: c.reported for c in declare(load_config("dap", scale))}


def test_the_papers_numbers_for_its_encoders():
    """Table 1, 36 languages, both directions averaged: mBERT+TR (90.1 + 90.1) / 2 = 90.1, mBERT+DAP
    (90.9 + 91.2) / 2 = 91.05; Table 3: XLM-R+TR+TLM 82.5, XLM-R+DAP 86.8; Table 4's average: mBERT+TR 69.9, mBERT+DAP
    71.8. Tables 7-8 have no row for the encoder before pre-training, so its Latin-script subset has no number."""
    paper = reported("paper")
    assert paper["above-tr.tatoeba.mbert"] == "mBERT: 90.1 → 91.05 (+0.95)"
    assert paper["above-tr_tlm.bucc.xlmr"] == "XLM-R: 82.5 → 86.8 (+4.3)"
    assert paper["above-tr.xnli.mbert"] == "mBERT: 69.9 → 71.8 (+1.9)"
    assert paper["above-initial.tatoeba-trained-latin.mbert"] == ""


def test_an_encoder_the_paper_did_not_train_gets_both_of_its_encoders():
    """Table 3: mBERT (recomputed) 44.8 → mBERT+DAP 86.6; XLM-R (recomputed) 57.6 → XLM-R+DAP 86.8."""
    assert reported("mini")["above-initial.bucc.minilm"] == "mBERT: 44.8 → 86.6 (+41.8); XLM-R: 57.6 → 86.8 (+29.2)"
