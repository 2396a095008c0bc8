"""Corpora: synthetic generator, real-format loaders, leakage rule, corpus builders."""
