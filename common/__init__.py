"""Shared modules for the four cross-lingual sentence-embedding papers.

One concept per module: ``common.data`` (corpora, loaders, leakage rule),
``common.models`` (tokenizers, encoders, pooling), ``common.losses``,
``common.training`` (DeepSpeed trainer), ``common.eval`` (Tatoeba, BUCC, STS, XNLI)
and ``common.report`` (tables and figures with the papers' numbers beside ours).
"""
