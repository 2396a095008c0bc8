"""How HICTL's tables and claims name its runs, languages and NMT test sets."""
from __future__ import annotations

LABEL = {"init": "initial encoder (untrained)", "lm_only": "MLM/TLM only", "hictl": "HICTL",
         "hictl_hns": "HICTL + Hns", "hictl_hns_no-sctl": "w/o Sentence-CTL", "hictl_hns_no-wctl": "w/o Word-CTL",
         "hictl_hns_no-mt": "w/o MT data"}
NAMES = {"de": "De", "en": "En", "fr": "Fr", "cs": "Cs", "es": "Es", "ro": "Ro", "zh": "Zh", "hi": "Hi", "it": "It",
         "nl": "Nl", "ne": "Ne", "si": "Si", "gu": "Gu"}
TEST_LABELS = {"iwslt14_test": "IWSLT'14", "multi30k_test_2016_flickr": "Multi30k 2016",
               "multi30k_test_2017_flickr": "Multi30k 2017", "multi30k_test_2017_mscoco": "Multi30k MSCOCO",
               "multi30k_test_2018_flickr": "Multi30k 2018", "wmt_newstest2021": "newstest2021",
               "wmt_generaltest2022": "generaltest2022", "synthetic_test": "synthetic", "wmt14_newstest2014": "WMT'14",
               "wmt16_newstest2016": "WMT'16", "iwslt17_test": "IWSLT'17", "wmt18_newstest2018": "WMT'18",
               "wmt19_newstest2019": "WMT'19",
               "iitb_test": "IITB", "flores_devtest": "FLORES"}  # "<label> <pair>" is the paper's column name


def arrow(pair: str) -> str:
    src, tgt = pair.split("-")
    return f"{NAMES.get(src, src)}→{NAMES.get(tgt, tgt)}"
