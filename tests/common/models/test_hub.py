"""Pinned Hub checkpoints (common/models/hub.py): every model a paper config names has a pinned
revision, is downloaded once into the cache by the workflow's ``model`` rule, and is read from there offline; the
tokenizers' dependencies (sentencepiece, protobuf) load XLM-R's and mT5's formats."""
import hashlib

import pytest
from transformers import AutoTokenizer

from common.config import load_config
from common.data import download as dl
from common.data.mirror_server import MirrorServer
from common.models import hub
from common.models.encoder import resolve_pretrained
from common.rehearsal import checkpoints

EXPERIMENTS = ["dap", "moco", "vmsst", "hictl", "leaderboard"]


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_every_paper_model_is_pinned(experiment):
    for name in hub.models_of(load_config(experiment, "paper")):
        m = hub.model(name)
        # by commit; google/mt5-large by branch, its files' digests recorded on first download and held to
        assert m.by_commit or name == "google/mt5-large", name
        assert any(f.endswith((".safetensors", ".bin")) for f in m.files) and "config.json" in m.files


def test_an_unpinned_model_is_a_clear_error():
    with pytest.raises(KeyError, match="no pinned revision"):
        hub.model("roberta-base")


def test_read_from_the_cache_only(monkeypatch, tmp_path):
    monkeypatch.setenv("XLING_CACHE", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="'model' rule"):
        resolve_pretrained("xlm-roberta-base")
    folder = tmp_path / "models" / hub.model("xlm-roberta-base").folder
    folder.mkdir(parents=True)
    (folder / "done.json").write_text("{}")
    assert resolve_pretrained("xlm-roberta-base") == str(folder)


@pytest.mark.parametrize("name", ["xlm-roberta-base", "google/mt5-large", "bert-base-multilingual-cased"])
def test_download_into_the_cache_and_load_the_tokenizer(tmp_path, name):
    """The model rule's download from a mirror of the Hub (the rehearsal's tiny checkpoint in the Hub's format),
    digest-checked and locked; then the tokenizer loads (SentencePiece needs sentencepiece and protobuf)."""
    m = hub.model(name)
    files = checkpoints.tiny_checkpoint(m)
    pins = {}
    for file, data in files.items():
        url = dl.Resource(file, m.url(file), revision=m.revision).url
        path = tmp_path / "www" / url.split("://", 1)[1]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        pins[f"{m.folder}/{file}"] = hashlib.sha256(data).hexdigest()
    with MirrorServer(tmp_path / "www") as server:
        folder = hub.download(name, tmp_path / "cache", server.url, pins)
        assert (folder / "done.json").exists()
        tok = AutoTokenizer.from_pretrained(folder)
        assert tok("hello world")["input_ids"]
        path.write_bytes(data + b" ")  # a served file that is not the pinned one
        with pytest.raises(dl.ChecksumError):
            hub.download(name, tmp_path / "other", server.url, pins)
        assert not (tmp_path / "other" / "models" / m.folder / "done.json").exists()
