"""Losses. Each is an ``nn.Module`` whose docstring says what it optimizes, the equation and its source."""
from common.losses.info_nce import QueueInfoNCELoss
from common.losses.translation_ranking import TranslationRankingLoss

__all__ = ["QueueInfoNCELoss", "TranslationRankingLoss"]
