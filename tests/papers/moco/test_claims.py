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
