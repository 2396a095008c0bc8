"""Every embedder kind the papers save is a complete sentence-transformers model: ``SentenceTransformer(path).encode``
gives our embedder's vectors (to 1e-5), and the folder's model card names the method, the data and the seed. Bad
folders and names each give one error naming the file or key."""
import json

import pytest
import torch
from sentence_transformers import SentenceTransformer

from common.models.embedder import load_embedder, load_model, save_dual_encoder, save_sentence_encoder
from common.models.encoder import EncoderSpec, SentenceEncoder, build_encoder
from common.models.tokenizer import train_wordpiece
from common.training.cli import write_model_card

SENTS = ["the man sees a dog", "ku ma so li", "a dog", "so li ku ma the dog sees"]


@pytest.fixture(scope="module")
def tok(tmp_path_factory):
    return train_wordpiece(SENTS * 3, 60, tmp_path_factory.mktemp("tok"), min_frequency=1)


def encoder(tok, seed, pooling="mean"):
    torch.manual_seed(seed)
    return SentenceEncoder(build_encoder(EncoderSpec(hidden_size=16, num_layers=1, num_heads=2, intermediate_size=32),
                                         len(tok)), pooling).eval()


def projection(seed, d_in=16, d_out=8):
    torch.manual_seed(seed)
    return torch.nn.Linear(d_in, d_out, bias=False)


def resolved(tmp_path, paper, method, seed):
    """The resolved config a training job saves beside its model, with a one-language corpus manifest."""
    train = tmp_path / "train" / "deu-en.tsv"
    train.parent.mkdir(parents=True, exist_ok=True)
    train.write_text("ku ma\tthe man\nso li\ta dog\n")
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"kind": "synthetic", "train": {"deu": str(train)},
                                    "leakage": {"dropped_total": 5, "dropped": {"deu": 5}}}))
    return {"paper": paper, "experiment": paper, "n_examples": 2, "method": {"objectives": ["tr"]},
            "run": {"method": method, "seed": seed, "init": "scratch", "scale": "smoke", "corpus": str(manifest)},
            "config": {"encoders": {"scratch": {"hidden_size": 16}}, "training": {"max_steps": 10, "seed": seed}}}


KINDS = {  # kind -> how its paper saves it
    "sentence encoder, no projection (DAP, TR: normalised)": dict(pooling="mean", normalize=True),
    "sentence encoder with projection (HICTL: CLS, f, normalised)": dict(pooling="cls", project=True, normalize=True),
    "VMSST's semantic encoder (mean, the latent mean's map, dot products)": dict(pooling="mean", project=True),
}


@pytest.mark.parametrize("kind", KINDS)
def test_sentence_transformers_gives_our_vectors(kind, tok, tmp_path):
    k = KINDS[kind]
    enc = encoder(tok, 1, k["pooling"])
    out = tmp_path / "m"
    save_sentence_encoder(enc, tok, out, max_length=16, projection=projection(2) if k.get("project") else None,
                          normalize=k.get("normalize", False))
    write_model_card(out, resolved(tmp_path, "hictl", "hictl", seed=3))
    ours = load_embedder(out).encode(SENTS, "deu")
    theirs = torch.tensor(SentenceTransformer(str(out), device="cpu").encode(SENTS))
    assert ours.shape == theirs.shape == (len(SENTS), 8 if k.get("project") else 16)
    assert torch.allclose(ours, theirs, atol=1e-5)
    if k.get("normalize"):
        assert torch.allclose(theirs.norm(dim=1), torch.ones(len(SENTS)), atol=1e-5)
    card = (out / "README.md").read_text()
    assert "# hictl (" in card and "seed 3" in card and "deu" in card and "5 pairs" in card
    assert card.startswith("---\nlibrary_name: sentence-transformers")
    assert json.loads((out / "config_sentence_transformers.json").read_text())["similarity_fn_name"] == "cosine"


def test_dual_encoder_loads_as_one_model_with_a_route_per_side(tok, tmp_path):
    out = tmp_path / "m"
    save_dual_encoder({"xx": (encoder(tok, 1), tok), "en": (encoder(tok, 2), tok)}, out, max_length=16,
                      normalize=True)
    write_model_card(out, resolved(tmp_path, "moco", "moco", seed=2))
    ours = load_embedder(out)
    st = SentenceTransformer(str(out), device="cpu")
    assert torch.allclose(ours.encode(SENTS, "deu"), torch.tensor(st.encode(SENTS, task="xx")), atol=1e-5)
    assert torch.allclose(ours.encode(SENTS, "en"), torch.tensor(st.encode(SENTS, task="en")), atol=1e-5)
    assert not torch.allclose(torch.tensor(st.encode(SENTS, task="xx")), torch.tensor(st.encode(SENTS, task="en")))
    card = (out / "README.md").read_text()
    assert "# moco (" in card and "seed 2" in card and 'task="en"' in card and "Router" in card


def test_unknown_pooling_mode_names_the_file(tok, tmp_path):
    out = tmp_path / "m"
    save_sentence_encoder(encoder(tok, 1), tok, out, max_length=16)
    cfg = out / "1_Pooling" / "config.json"
    cfg.write_text(json.dumps({"word_embedding_dimension": 16, "pooling_mode": "median"}))
    with pytest.raises(ValueError, match=f"{cfg}: unknown pooling mode 'median'"):
        load_embedder(out)
    cfg.write_text(json.dumps({"word_embedding_dimension": 16, "pooling_mode_cls_token": False}))
    with pytest.raises(ValueError, match=f"{cfg}: no pooling mode set"):
        load_embedder(out)
    cfg.unlink()
    with pytest.raises(FileNotFoundError, match=f"{cfg}: no pooling config"):
        load_embedder(out)


def test_hub_name_without_revision_names_the_key():
    with pytest.raises(ValueError, match="'intfloat/e5-small': a Hub model needs its revision"):
        load_model("intfloat/e5-small")
    with pytest.raises(ValueError, match="revision 'main' is not a commit"):
        load_model("intfloat/e5-small@main")


def test_model_folder_without_weights_names_the_folder(tok, tmp_path):
    out = tmp_path / "m"
    save_sentence_encoder(encoder(tok, 1), tok, out, max_length=16)
    (out / "model.safetensors").unlink()
    (out / "embedder.json").unlink()  # an outside folder (no embedder.json) is checked the same way
    with pytest.raises(FileNotFoundError, match=f"{out}: no weights"):
        load_model(str(out))


def test_plain_hugging_face_model_needs_its_pooling(tok, tmp_path):
    out = tmp_path / "m"
    enc = encoder(tok, 1, "max")
    enc.backbone.save_pretrained(out)
    tok.save_pretrained(out)
    with pytest.raises(ValueError, match="needs its pooling named"):
        load_model(str(out))
    emb, meta = load_model(str(out), pooling="max", max_length=16)
    assert meta["modules"] == ["Transformer", "Pooling(max)"]
    from transformers import AutoModel

    hf = AutoModel.from_pretrained(out, add_pooling_layer=False).eval()
    batch = tok(SENTS, padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = hf(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).last_hidden_state
    naive = torch.stack([h[m.bool()].max(0).values for h, m in zip(hidden, batch["attention_mask"])])  # (N, D)
    assert torch.allclose(emb.encode(SENTS, "en"), naive, atol=1e-5)


@pytest.mark.parametrize("mode", ["cls", "max", "mean_sqrt_len_tokens", "weightedmean", "lasttoken",
                                  ["cls", "mean"]])
def test_every_pooling_mode_as_sentence_transformers_pools(mode, tok, tmp_path):
    out = tmp_path / "m"
    save_sentence_encoder(encoder(tok, 4), tok, out, max_length=16)
    (out / "embedder.json").unlink()  # read as an outside model: its own Pooling config
    (out / "1_Pooling" / "config.json").write_text(json.dumps({"embedding_dimension": 16, "pooling_mode": mode}))
    ours, _ = load_model(str(out))
    theirs = torch.tensor(SentenceTransformer(str(out), device="cpu").encode(SENTS))
    assert torch.allclose(ours.encode(SENTS, "en"), theirs, atol=1e-5)


def test_declared_prompt_left_out_of_pooling(tok, tmp_path):
    from common.eval.__main__ import prompt_for
    from common.eval.tasks import get_task

    out = tmp_path / "m"
    save_sentence_encoder(encoder(tok, 5), tok, out, max_length=16)
    (out / "embedder.json").unlink()
    (out / "1_Pooling" / "config.json").write_text(json.dumps({"embedding_dimension": 16, "pooling_mode": "mean",
                                                                "include_prompt": False}))
    settings = json.loads((out / "config_sentence_transformers.json").read_text())
    settings.update(prompts={"STS": "the dog : ", "query": "ku : "}, default_prompt_name="query")
    (out / "config_sentence_transformers.json").write_text(json.dumps(settings))
    ours, meta = load_model(str(out))
    prompt = prompt_for(get_task("sts-en@wmean"), meta["prompts"], meta["default_prompt_name"])
    assert prompt == "the dog : "  # named after the task's MTEB type, before the default
    assert prompt_for(get_task("tatoeba@cosine"), meta["prompts"], meta["default_prompt_name"]) == "ku : "
    ours.use_prompt(prompt)
    theirs = torch.tensor(SentenceTransformer(str(out), device="cpu").encode(SENTS, prompt_name="STS"))
    assert torch.allclose(ours.encode(SENTS, "en"), theirs, atol=1e-5)
