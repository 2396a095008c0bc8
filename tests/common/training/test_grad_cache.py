"""Gradient caching (Gao et al. 2021) is exact: the gradient of a batch encoded in checkpointed chunks equals the
full-batch gradient (a plain unchunked pass, the naive reference) for a contrastive loss and for each paper's model;
with dropout, the recomputation reuses the first pass's masks."""
import pytest
import torch
from transformers import BertConfig, BertModel

from common.losses.translation_ranking import TranslationRankingLoss
from common.models.encoder import SentenceEncoder
from common.training.grad_cache import cached_forward, enable_grad_cache


def encoder(dropout: float = 0.0) -> SentenceEncoder:
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=40, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
                     max_position_embeddings=16, hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)
    return SentenceEncoder(BertModel(cfg, add_pooling_layer=False), "mean")


def pairs(b: int = 7, s: int = 6) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(1)
    mask = torch.ones(b, s, dtype=torch.long)
    mask[1, -2:] = 0
    return torch.randint(5, 40, (b, s), generator=g), mask, torch.randint(5, 40, (b, s), generator=g), mask


def grads(model: torch.nn.Module) -> torch.Tensor:
    return torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])


def ranking_grads(rows: int) -> tuple[float, torch.Tensor]:
    # float64: chunked and full-batch passes sum in different orders, and float32's round-off (~3e-6 here, varying
    # with the thread count) would blur "equal" into "close"
    enc = encoder().double()
    if rows:
        assert enable_grad_cache(enc, rows) == 1
    x, xm, y, ym = pairs()
    loss = TranslationRankingLoss(temperature=0.05)(enc(x, xm)[0], enc(y, ym)[0])
    loss.backward()
    return loss.item(), grads(enc)


@pytest.mark.parametrize("rows", [1, 3, 6])
def test_chunked_gradient_equals_the_full_batch_gradient(rows):
    """In-batch translation ranking over 7 pairs couples every row with every other; chunks of 1, 3 (7 = 3+3+1)
    and 6 rows give the unchunked loss and gradient."""
    loss, g = ranking_grads(0)
    loss_c, g_c = ranking_grads(rows)
    assert loss_c == pytest.approx(loss, rel=1e-12)
    assert torch.allclose(g_c, g, atol=1e-11, rtol=1e-10)


def test_recomputation_reuses_the_dropout_masks():
    """With dropout on, the cached pass equals a plain pass over the same chunks with the same random stream: the
    backward's recomputation draws the masks of the first pass again (the checkpoint restores the RNG state)."""
    x, xm, y, ym = pairs()
    results = []
    for cached in (False, True):
        enc = encoder(dropout=0.3).train()
        torch.manual_seed(5)
        if cached:
            vx, vy = cached_forward(enc, 3, x, xm)[0], cached_forward(enc, 3, y, ym)[0]
        else:
            vx = torch.cat([enc(x[i:i + 3], xm[i:i + 3])[0] for i in range(0, 7, 3)])
            vy = torch.cat([enc(y[i:i + 3], ym[i:i + 3])[0] for i in range(0, 7, 3)])
        TranslationRankingLoss(temperature=0.05)(vx, vy).backward()
        results.append(grads(enc))
    assert torch.allclose(results[0], results[1], atol=1e-6)


def test_without_gradients_and_small_batches_it_runs_unchunked():
    calls = []

    def forward(ids):
        calls.append(len(ids))
        return ids.float()

    ids = torch.arange(5)[:, None]
    with torch.no_grad():
        cached_forward(forward, 2, ids)
    cached_forward(forward, 8, ids)
    assert calls == [5, 5]
    cached_forward(forward, 2, ids)
    assert calls[2:] == [2, 2, 1]


def test_a_model_without_a_rowwise_encoder_is_refused():
    with pytest.raises(ValueError, match="no module with a row-wise forward"):
        enable_grad_cache(torch.nn.Linear(2, 2), 4)


# ------------------------------------------------------------------ every paper's contrastive loss
def _moco(negatives: str):
    from papers.moco.model import DualMomentumContrast
    from tests.papers.moco.test_model import batch
    from tests.papers.moco.test_model import encoder as moco_encoder

    kw = {"queue_size": 10, "momentum": 0.5, "negatives": negatives}
    return DualMomentumContrast(moco_encoder(0), moco_encoder(1), temperature=0.1, **kw), batch(b=5)


def _vmsst(objective: str):
    from tests.papers.vmsst.test_model import batch, model

    return model(objective), batch()


def _hictl():
    import tempfile

    from common.models.tokenizer import train_wordpiece
    from papers.hictl.data import HICTLCollator
    from tests.papers.hictl.test_model import EXAMPLES, model
    with tempfile.TemporaryDirectory() as d:
        words = "the cat dog sat ran on under mat table red blue le chat chien rouge bleu sur la".split()
        tok = train_wordpiece([" ".join(words)] * 5, 200, d, min_frequency=1)
    return model(tok), HICTLCollator(tok, 16)(EXAMPLES, torch.Generator().manual_seed(1))


def _dap():
    import tempfile

    from common.models.tokenizer import train_wordpiece
    from papers.dap.data import DAPCollator
    from papers.dap.model import DAPModel
    from tests.papers.dap.test_rtl import PAIRS, mlm
    with tempfile.TemporaryDirectory() as d:
        tok = train_wordpiece([s for a, b, _ in PAIRS for s in (a, b)] * 3, vocab_size=80, out_dir=d,
                              min_frequency=1)
    model = DAPModel(mlm(tok), ["tr", "rtl"], temperature=0.05, mask_token_id=tok.mask_token_id).eval()  # no dropout
    return model, DAPCollator(tok, 16, ["tr", "rtl"])(PAIRS, torch.Generator().manual_seed(0))


PAPER_MODELS = {"moco-queue": lambda: _moco("queue"), "moco-in-batch": lambda: _moco("in_batch"),
                "vmsst": lambda: _vmsst("vmsst"), "vmsst-contrastive": lambda: _vmsst("contrastive"),
                "hictl": _hictl, "dap-tr-rtl": _dap}


@pytest.mark.parametrize("name", sorted(PAPER_MODELS))
def test_every_papers_model_gets_the_full_batch_gradient(name):
    """Each paper's whole training loss (dropout off, so the two passes are the same function): chunks of 3 rows
    (batches of 4 or 5 split unevenly) give the unchunked loss and gradient."""
    results = []
    for rows in (0, 3):
        model, batch = PAPER_MODELS[name]()
        if rows:
            assert enable_grad_cache(model, rows) >= 1
        torch.manual_seed(2)
        out = model(**batch)
        out["loss"].backward()
        results.append((out["loss"].item(), grads(model)))
    assert results[1][0] == pytest.approx(results[0][0], rel=1e-6)
    assert torch.allclose(results[1][1], results[0][1], atol=1e-6, rtol=1e-5)
