"""The mini configs' output length cap (``nmt.max_len``) cuts no reference: every Multi30k test sentence, in every
direction with English, fits a x (source length) + b tokens as fairseq-generate counts them (source: the binarized
pieces with [CLS] and [SEP]; output: the target-language tag and the target dictionary's pieces, before the EOS).
Where the config gives the target side a dictionary of its own (``nmt.target_vocab``), the pieces are those of one
learned at that size on all four Multi30k languages' training sides: a setting learns its own on one or two
languages, which spends the same number of pieces on fewer words and so splits its sentences no finer."""
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


@pytest.mark.parametrize("experiment", ["hictl", "leaderboard"])
def test_no_multi30k_reference_exceeds_the_mini_cap(data_root, experiment, tmp_path):
    cfg = load_config(experiment, "mini")
    a, b = cfg["nmt"]["max_len"]
    tok = AutoTokenizer.from_pretrained(resolve_pretrained(next(iter(cfg["encoders"].values()))["pretrained"]))
    raw = data_root / "multi30k" / "raw"
    target = tok
    if cfg["nmt"].get("target_vocab"):
        for lang in ("cs", "de", "en", "fr"):
            (tmp_path / f"train.{lang}").write_text("\n".join(read_lines(raw / f"train.{lang}.gz")) + "\n")
        target = AutoTokenizer.from_pretrained(train_target_tokenizer(sorted(tmp_path.glob("train.*")),
                                                                      cfg["nmt"]["target_vocab"], tmp_path / "tgt"))
    tests = sorted({m.group(1) for p in raw.glob("test_*.gz") if (m := re.match(r"(test_.+)\.en\.gz$", p.name))})
    checked = 0
    for test in tests:
        english = read_lines(raw / f"{test}.en.gz")
        for other in sorted(p.name.split(".")[1] for p in raw.glob(f"{test}.*.gz")):
            if other == "en":
                continue
            foreign = read_lines(raw / f"{test}.{other}.gz")
            for src, tgt in ((foreign, english), (english, foreign)):
                s_ids = tok(src, truncation=True, max_length=TEST_MAX_LENGTH)["input_ids"]
                t_ids = target(tgt, add_special_tokens=False)["input_ids"]
                cut = [i + 1 for i, (s, t) in enumerate(zip(s_ids, t_ids)) if not fits(a, b, s, t)]
                assert not cut, f"{test} {other}: lines {cut[:5]} exceed the cap {a} x source + {b}"
                checked += len(src)
    assert checked >= 10_000  # 2016-2018 Flickr and 2017 MSCOCO, de / fr / cs, both directions


def test_fairseq_generate_reads_the_cap(tmp_path):
    """The command line the recipe builds parses, with fairseq's own parser, into the cap the config gives."""
    from fairseq import options

    from common.nmt.recipe import generation_args

    args = options.parse_args_and_arch(options.get_generation_parser(), generation_args(
        tmp_path / "model.pt", tmp_path, "test_x", tmp_path / "out", 5, 1.0, (2.0, 20.0)))
    assert (args.max_len_a, args.max_len_b, args.beam, args.lenpen) == (2.0, 20, 5, 1.0)
