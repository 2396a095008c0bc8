"""Tokenizers, encoders and pooling."""
