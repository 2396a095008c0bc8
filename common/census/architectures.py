"""The architectures of the pinned Hub models (``common/models/hub_pins.yaml``), as their ``config.json`` says.

The census builds each paper's model at the paper's size without downloading weights: it writes these configs
into stand-in model folders, and the models are built from them with random weights (``probe.py``). The values
are those of the config files at the pinned revisions (public facts; the rehearsal mirror's stand-ins use the
same model types at tiny widths).
"""
from __future__ import annotations

from typing import Any

_BERT_BASE = {"model_type": "bert", "architectures": ["BertForMaskedLM"], "hidden_size": 768,
              "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
              "max_position_embeddings": 512, "type_vocab_size": 2, "hidden_act": "gelu"}
_XLMR = {"model_type": "xlm-roberta", "architectures": ["XLMRobertaForMaskedLM"], "vocab_size": 250002,
         "max_position_embeddings": 514, "type_vocab_size": 1, "pad_token_id": 1, "bos_token_id": 0,
         "eos_token_id": 2, "layer_norm_eps": 1e-5, "hidden_act": "gelu"}

CONFIGS: dict[str, dict[str, Any]] = {
    "bert-base-multilingual-cased": {**_BERT_BASE, "vocab_size": 119547},
    "bert-base-uncased": {**_BERT_BASE, "vocab_size": 30522},
    "hfl/chinese-roberta-wwm-ext": {**_BERT_BASE, "vocab_size": 21128},
    "xlm-roberta-base": {**_XLMR, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
                         "intermediate_size": 3072},
    "xlm-roberta-large": {**_XLMR, "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
                          "intermediate_size": 4096},
    "google/mt5-large": {"model_type": "mt5", "architectures": ["MT5ForConditionalGeneration"], "vocab_size": 250112,
                         "d_model": 1024, "d_kv": 64, "d_ff": 2816, "num_layers": 24, "num_decoder_layers": 24,
                         "num_heads": 16, "relative_attention_num_buckets": 32, "feed_forward_proj": "gated-gelu",
                         "tie_word_embeddings": False, "decoder_start_token_id": 0, "pad_token_id": 0,
                         "eos_token_id": 1},
}


def vocab_size(name: str) -> int:
    return int(CONFIGS[name]["vocab_size"])
