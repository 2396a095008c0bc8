"""VMSST: Wieting, Clark, Cohen, Neubig, Berg-Kirkpatrick. Beyond Contrastive Learning: A Variational Generative
Model for Multilingual Retrieval. ACL 2023 (../shared/papers/003_00e2d26dc84a9113.txt)."""
