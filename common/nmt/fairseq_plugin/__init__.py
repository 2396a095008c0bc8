"""fairseq user-dir plugin (``--user-dir common/nmt/fairseq_plugin``): the ``translation_hf`` task (dictionaries
built from a Hugging Face tokenizer, ids unchanged) and the ``hf_encoder_transformer`` model (a saved HF encoder of
this repository, a new Transformer decoder, the [CLS]-vocabulary logit bias). Importing it also lets
``torch.load(..., weights_only=True)`` read the checkpoints fairseq writes for these models (their configs hold
argparse / omegaconf objects): :func:`common.nmt.checkpoints.allow_fairseq_checkpoints`."""
from common.nmt import checkpoints
from common.nmt.fairseq_plugin import model, task  # noqa: F401  (registration)

checkpoints.allow_fairseq_checkpoints()
