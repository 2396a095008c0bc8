"""MoCo-BERT's claims carry the paper's own numbers (papers/moco/reported.yaml), worked out by hand."""
from common.config import load_config
from papers.moco.claims import declare


def test_the_papers_numbers():
    """Table 1: mBERT-base 71.6 against MoCo-BERT's (97.4 + 96.6) / 2 = 97.0; Table 5's BUCC: 0.00 without momentum,
    93.14 with; the in-batch baseline is in no table of the paper."""
    paper = {c.id: c.reported for c in declare(load_config("moco", "mini"))}
    assert paper["training-aligns.tatoeba"] == "mBERT → MoCo-BERT: 71.6 → 97.0 (+25.4)"
    assert paper["no-momentum-fails.bucc"] == "0.0 → 93.14 (+93.14)"
    assert paper["queue-beats-inbatch.tatoeba"] == ""


def test_figure2_numbers_only_for_the_queues_it_gives():
    """Figure 2 is a plot: of its points only 204,800 (76.20) and 409,600 (76.50) are known, from the tables; other
    queue sizes get no paper number."""
    paper = {c.id: c.reported for c in declare(load_config("moco", "paper"))}
    assert paper["larger-queues-help.204800-409600.sts"] == "queue 204,800 → 409,600 (inferred): 76.2 → 76.5 (+0.3)"
    assert paper["larger-queues-help.102400-204800.sts"] == ""
    mini = {c.id: c.reported for c in declare(load_config("moco", "mini"))}
    assert mini["larger-queues-help.32-64.sts"] == ""
