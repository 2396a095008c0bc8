"""Which tokenizer a run's encoder initialisation needs (common/models/tokenizer_sides.py)."""
from common.models import tokenizer_sides as tokenizers

CFG = {"tokenizer": {"vocab_size": 8000},
       "encoders": {"scratch": {"hidden_size": 128},
                    "mt5_vocab": {"hidden_size": 1024, "tokenizer": "google/mt5-large"},
                    "mt5": {"pretrained": "google/mt5-large"},
                    "pair": {"xx": {"pretrained": "bert-base-chinese"}, "en": {"hidden_size": 64}}}}


def test_arguments_per_initialisation():
    assert tokenizers.arguments(CFG, "scratch", "shared") == "--side both --vocab-size 8000 --min-frequency 2"
    # VMSST's random-init models: a from-scratch encoder with the mT5 vocabulary (section 6.4)
    assert tokenizers.arguments(CFG, "mt5_vocab", "shared") == "--pretrained google/mt5-large"
    assert tokenizers.arguments(CFG, "mt5", "shared") == "--pretrained google/mt5-large"
    assert tokenizers.arguments(CFG, "pair", "xx") == "--pretrained bert-base-chinese"
    assert tokenizers.arguments(CFG, "pair", "en") == "--side en --vocab-size 8000 --min-frequency 2"


def test_sides_and_folders():
    assert tokenizers.sides(CFG["encoders"]["pair"]) == ["xx", "en"]
    assert tokenizers.folder("r", "scratch", CFG["encoders"]["scratch"]) == "r/tokenizer/scratch/shared"
    assert tokenizers.folder("r", "pair", CFG["encoders"]["pair"]) == "r/tokenizer/pair"
