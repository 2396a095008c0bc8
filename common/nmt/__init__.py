"""Neural machine translation from this repository's encoders (HICTL section 3.2, Figure 3): a fairseq user-dir
plugin (:mod:`common.nmt.fairseq_plugin`), the binarizer that keeps the encoder tokenizer's ids
(:mod:`common.nmt.binarize`), the two-stage recipe driving ``fairseq-train`` / ``fairseq-generate``
(:mod:`common.nmt.recipe`) and BLEU (:mod:`common.nmt.bleu`)."""
