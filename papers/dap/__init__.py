"""DAP: Dual-Alignment Pre-training for Cross-lingual Sentence Embedding (Li et al., ACL 2023)."""
