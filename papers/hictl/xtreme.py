"""XTREME as HICTL's Tables 1-3 lay it out: the columns (task ids per setting) and the basis of the paper's Tables
2 and 3, so that our rows and claims beside them are computed on that basis where the scale runs it."""
from __future__ import annotations

# Table 1's columns: (header, task id, path into the results); QA tasks give F1 and EM
COLUMNS = [("XNLI", "xnli@zero-shot", "main_score"), ("PAWS-X", "pawsx@zero-shot", "main_score"),
           ("POS", "pos@zero-shot", "main_score"), ("NER", "ner@zero-shot", "main_score"),
           ("XQuAD F1", "qa@xquad", "f1"), ("XQuAD EM", "qa@xquad", "exact_match"),
           ("MLQA F1", "qa@mlqa", "f1"), ("MLQA EM", "qa@mlqa", "exact_match"),
           ("TyDiQA F1", "qa@tydiqa", "f1"), ("TyDiQA EM", "qa@tydiqa", "exact_match"),
           ("BUCC", "bucc@ratio-k4", "main_score"), ("Tatoeba", "tatoeba@cosine", None)]
# translate-train-all: the tasks whose translated training data we run; the others as in zero-shot (XTREME has none
# for POS and NER; its translated TyDiQA-GoldP training data is not run here)
TTA = {"xnli@zero-shot": "xnli@translate-train-all", "pawsx@zero-shot": "pawsx@translate-train-all",
       "qa@xquad": "qa@xquad-translate-train-all", "qa@mlqa": "qa@mlqa-translate-train-all"}


def columns_for(setting: str) -> list[tuple[str, str, str | None]]:
    return COLUMNS if setting == "zero-shot" else [(h, TTA.get(t, t), p) for h, t, p in COLUMNS]


# Tables 2 and 3 print HICTL large (24 layers, 1024 hidden, from XLM-R large: section 4.1) in translate-train-all:
# Table 2 says so in its heading, and Table 3's "Full Model" is Table 1's translate-train-all "+ Hns" row, cell for cell
PAPER_BASIS = {"setting": "translate-train-all", "pretrained": "xlm-roberta-large",
               "model": "HICTL large + Hns (24 layers, 1024 hidden, from XLM-R large; section 4.1)"}


def comparison_basis(cfg: dict) -> tuple[str, str]:
    """(encoder, setting) of our rows in Tables 2-3 and of their claims: the first encoder (at paper scale XLM-R
    large, the paper's) and translate-train-all where the scale runs its tasks, else zero-shot."""
    init = next(iter(cfg["encoders"]))  # the encoder Table 3's ablations train (papers/hictl/runs.py)
    setting = "translate-train-all" if any(t in cfg["hictl"]["tasks"] for t in TTA.values()) else "zero-shot"
    return init, setting


def setting_tasks(cfg: dict, setting: str) -> list[str]:
    """The config's tasks that make up one setting's columns (BUCC and Tatoeba belong to both)."""
    return [t for t in dict.fromkeys(t for _, t, _ in columns_for(setting)) if t in cfg["hictl"]["tasks"]]
