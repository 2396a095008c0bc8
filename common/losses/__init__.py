"""Losses. Each is an ``nn.Module`` whose docstring says what it optimizes and cites its source.

Registry: ``LOSSES`` maps a config name to the class.
"""
from common.losses.translation_ranking import TranslationRankingLoss

LOSSES = {"translation_ranking": TranslationRankingLoss}
