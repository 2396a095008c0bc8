"""The ``fairseq-encoder`` embedder kind (common/nmt/embedder.py): a recipe stage folder loads through the embedder
protocol and encodes with the checkpoint's encoder weights, the source folder's tokenizer and pooling."""
import argparse
import shutil
from pathlib import Path

import pytest
import torch

from common.models.embedder import NotApplicable, load_embedder
from common.models.encoder import SentenceEncoder, encode_sentences
from tests.common.nmt.conftest import SENTS, build_nmt_model

pytest.importorskip("fairseq")
from common.nmt.embedder import load_encoder_state, save_fairseq_encoder_meta  # noqa: E402


def _save_checkpoint(model, path):
    """What fairseq-train writes, as far as the loader reads it: the model's state dict and the run's arguments."""
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": model.state_dict(), "args": argparse.Namespace(arch="hf_encoder_transformer")}, path)


def test_stage_folder_encodes_with_the_checkpoints_encoder(encoder_dir, tmp_path):
    path, tok = encoder_dir
    model = build_nmt_model(path, tok)
    with torch.no_grad():  # stage 2 moved the encoder
        for p in model.encoder.backbone.parameters():
            p.add_(0.05 * torch.randn_like(p))
    stage = tmp_path / "results" / "stage2"
    _save_checkpoint(model, stage / "checkpoint_best.pt")
    save_fairseq_encoder_meta(stage, path)

    embedder = load_embedder(stage)
    got = embedder.encode(SENTS[:4], "de")
    expected = encode_sentences(SentenceEncoder(model.encoder.backbone, "cls"), tok, SENTS[:4], max_length=32)
    assert embedder.kind == "fairseq-encoder" and got.shape == (4, 16)
    assert torch.allclose(got, expected, atol=1e-6)
    assert not torch.allclose(got, load_embedder(path).encode(SENTS[:4], "de"), atol=1e-3)  # not the source's
    with pytest.raises(NotApplicable, match="no HF folder"):
        embedder.hf_model_dir()


def test_the_source_is_found_relative_to_the_stage_folder(encoder_dir, tmp_path):
    """A results tree that moves keeps working: the meta names the source by a relative path."""
    path, tok = encoder_dir
    tree = tmp_path / "results"
    shutil.copytree(path, tree / "models" / "model")
    model = build_nmt_model(path, tok)
    _save_checkpoint(model, tree / "nmt" / "stage1" / "checkpoint_best.pt")
    save_fairseq_encoder_meta(tree / "nmt" / "stage1", tree / "models" / "model")
    meta = (tree / "nmt" / "stage1" / "embedder.json").read_text()
    assert '"encoder": "../../models/model"' in meta and '"kind": "fairseq-encoder"' in meta
    moved = shutil.move(tree, tmp_path / "moved")
    # a frozen encoder (stage 1) embeds exactly like its source
    assert torch.equal(load_embedder(Path(moved) / "nmt" / "stage1").encode(SENTS[:3], "en"),
                       load_embedder(path).encode(SENTS[:3], "en"))


def test_a_bare_hf_source_gives_no_embedder_folder(encoder_dir, tmp_path):
    path, tok = encoder_dir
    bare = tmp_path / "bare"
    SentenceEncoder.load(path).save(bare, tok)  # an HF folder without the repository's embedder.json
    assert not save_fairseq_encoder_meta(tmp_path / "stage", bare)
    assert not (tmp_path / "stage" / "embedder.json").exists()


def test_loading_keeps_the_process_wide_allow_list(encoder_dir, tmp_path):
    """The allow-list the plugin registers must survive a load (a ``safe_globals`` context removed it on exit, and
    the next weights-only load of a fairseq checkpoint in the process failed)."""
    import common.nmt.fairseq_plugin  # noqa: F401  (registers argparse.Namespace)

    path, tok = encoder_dir
    _save_checkpoint(build_nmt_model(path, tok), tmp_path / "c.pt")
    load_encoder_state(tmp_path / "c.pt")
    assert argparse.Namespace in torch.serialization.get_safe_globals()
    assert "model" in torch.load(tmp_path / "c.pt", weights_only=True)


def test_a_checkpoint_without_an_hf_encoder_is_refused(tmp_path):
    torch.save({"model": {"decoder.embed_tokens.weight": torch.zeros(2, 2)}}, tmp_path / "c.pt")
    with pytest.raises(ValueError, match="c.pt: no 'encoder.backbone"):
        load_encoder_state(tmp_path / "c.pt")
    torch.save({"weights": 1}, tmp_path / "d.pt")
    with pytest.raises(ValueError, match="d.pt: not a fairseq checkpoint"):
        load_encoder_state(tmp_path / "d.pt")
