"""MoCo-BERT: Wang, Zhao, Liu. Aligning Cross-lingual Sentence Representations with Dual
Momentum Contrast. EMNLP 2021 (../shared/papers/000_01dc723be4cffc73.txt)."""
