"""Losses: one module per loss, each providing (checked by tests/common/losses/test_contract.py)

* a module docstring that says what it optimizes and cites where it comes from (author et al. year, with the
  equation or section);
* the loss as an ``nn.Module`` whose ``forward`` returns the scalar to minimize (or, for a per-token loss, a
  function returning one value per token);
* ``tests/common/losses/test_<module>.py``, which checks it against a naive reference implementation.
"""
from common.losses.info_nce import QueueInfoNCELoss
from common.losses.translation_ranking import TranslationRankingLoss

__all__ = ["QueueInfoNCELoss", "TranslationRankingLoss"]
