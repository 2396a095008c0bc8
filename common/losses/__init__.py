"""Losses. Each is an ``nn.Module`` whose docstring says what it optimizes and cites its source.

Registry: ``LOSSES`` maps a config name to the class.
"""
from common.losses.info_nce import QueueInfoNCELoss
from common.losses.translation_ranking import TranslationRankingLoss

LOSSES = {"translation_ranking": TranslationRankingLoss, "queue_info_nce": QueueInfoNCELoss}
