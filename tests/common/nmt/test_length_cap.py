"""The mini configs' output length cap (``nmt.max_len``) cuts no reference: every Multi30k test sentence, in every
direction with English, fits a x (source length) + b tokens as fairseq-generate counts them (source: the binarized
pieces with [CLS] and [SEP]; output: the target-language tag and the target dictionary's pieces, before the EOS).
Where the config gives the target side a dictionary of its own (``nmt.target_vocab``), the pieces are those of each
setting's own, learned as the workflow learns it."""
import math
import re

import pytest
from transformers import AutoTokenizer

from common.config import load_config
from common.io import read_lines
from common.models.encoder import resolve_pretrained
from common.nmt.binarize import TEST_MAX_LENGTH
from common.nmt.target_vocab import train_target_tokenizer


def fits(a: float, b: float, source: list[int], target: list[int]) -> bool:
    return 1 + len(target) <= math.floor(a * len(source) + b)


def test_the_cap_is_counted_as_fairseq_counts_it():
    """fairseq's SequenceGenerator stops at int(a * src_len + b) steps; the tag is the first step."""
    assert fits(2, 20, [0] * 5, [0] * 29) and not fits(2, 20, [0] * 5, [0] * 30)
    assert fits(1.5, 0, [0] * 3, [0] * 3) and not fits(1.5, 0, [0] * 3, [0] * 4)  # int(4.5) = 4


def target_tokenizers(cfg, tok, raw, tmp_path) -> dict[str, list]:
    """Target language -> the pieces its references are written in: the encoder's, or with ``nmt.target_vocab``
    each setting's own dictionary, learned on the setting's fine-tuning targets (Multi30k's training sides, before
    the leakage rule drops a handful of pairs) as the workflow learns it."""
    nmt = cfg["nmt"]
    if not nmt.get("target_vocab"):
        return {lang: [tok] for lang in ("cs", "de", "en", "fr")}
    out: dict[str, list] = {}
    for setting, spec in nmt["settings"].items():
        langs = sorted({p.split("-")[1] for p in spec["finetune"]})
        files = []
        for lang in langs:
            files.append(tmp_path / f"{setting}.{lang}")
            files[-1].write_text("\n".join(read_lines(raw / f"train.{lang}.gz")) + "\n", encoding="utf-8")
        own = AutoTokenizer.from_pretrained(train_target_tokenizer(files, nmt["target_vocab"], tmp_path / setting))
        for lang in langs:  # two settings into one language: the finer split counts
            out.setdefault(lang, []).append(own)
    return out


@pytest.mark.parametrize("experiment", ["hictl", "leaderboard"])
def test_no_multi30k_reference_exceeds_the_mini_cap(data_root, experiment, tmp_path):
    cfg = load_config(experiment, "mini")
    a, b = cfg["nmt"]["max_len"]
    tok = AutoTokenizer.from_pretrained(resolve_pretrained(next(iter(cfg["encoders"].values()))["pretrained"]))
    raw = data_root / "multi30k" / "raw"
    targets = target_tokenizers(cfg, tok, raw, tmp_path)
    tests = sorted({m.group(1) for p in raw.glob("test_*.gz") if (m := re.match(r"(test_.+)\.en\.gz$", p.name))})
    checked = 0
    for test in tests:
        english = read_lines(raw / f"{test}.en.gz")
        for other in sorted(p.name.split(".")[1] for p in raw.glob(f"{test}.*.gz")):
            if other == "en":
                continue
            foreign = read_lines(raw / f"{test}.{other}.gz")
            for src, tgt, lang in ((foreign, english, "en"), (english, foreign, other)):
                s_ids = tok(src, truncation=True, max_length=TEST_MAX_LENGTH)["input_ids"]
                for target in targets.get(lang, []):  # a language no setting translates into: nothing to cap
                    t_ids = target(tgt, add_special_tokens=False)["input_ids"]
                    cut = [i + 1 for i, (s, t) in enumerate(zip(s_ids, t_ids)) if not fits(a, b, s, t)]
                    assert not cut, f"{test} {other}: lines {cut[:5]} exceed the cap {a} x source + {b}"
                    checked += len(src)
    assert checked >= 5_000  # 2016-2018 Flickr and 2017 MSCOCO, de / fr / cs, into every language translated


def test_fairseq_generate_reads_the_cap(tmp_path):
    """The command line the recipe builds parses, with fairseq's own parser, into the cap the config gives."""
    from fairseq import options

    from common.nmt.recipe import generation_args

    args = options.parse_args_and_arch(options.get_generation_parser(), generation_args(
        tmp_path / "model.pt", tmp_path, "test_x", tmp_path / "out", 5, 1.0, (2.0, 20.0)))
    assert (args.max_len_a, args.max_len_b, args.beam, args.lenpen) == (2.0, 20, 5, 1.0)
