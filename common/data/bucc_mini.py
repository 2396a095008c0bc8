"""A BUCC-style mining benchmark built from held-out real translations (the mini scale has no BUCC data).

BUCC 2017/2018 hides ~2-3 % of parallel sentence pairs among non-parallel sentences on both sides.
:func:`build` does the same with the translations in ``data_root`` that no training set of the mini
scale contains, for each language pair ``{xx}-en``, in the real BUCC file format with the three splits
(``sample``, ``training``, ``test``), so the BUCC evaluator runs on it unchanged:

* **Gold pairs** (``gold_per_split``, at least 150 in the reported and tuning splits) and **source-only
  distractors** come from a pool of held-out ``(xx, en)`` pairs; a distractor keeps one side and its
  translation is dropped, so no distractor has a translation in the split.
* **No paraphrase partners in the pool.** STS sets contribute *one* sentence per STS pair, chosen so that
  no two chosen sentences form an STS pair anywhere in the set; XNLI contributes premises only, never a
  hypothesis (which paraphrases, contradicts or extends its premise).
* **English-only distractors** come from English text of other genres (``english_extra``), never equal
  (after the leakage rule's normalisation) to the English side of any pool pair, until the English side
  of a split holds ``english_per_split`` sentences (scaled down for a split with fewer gold pairs): ~3 %
  gold on the English side, as in BUCC.

The pools are small for some languages (data_root has few held-out Russian or French translations), so
the *source* side can hold a larger gold share than BUCC's; the manifest records every split's counts and
shares, and the table notes say so.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common.data import loaders, xquad_r
from common.data.corpora import matching
from common.data.leakage import LeakageFilter, normalize
from common.io import write_lines

SPLITS = ("sample", "training", "test")
Pairs = list[tuple[str, str]]


def one_sentence_per_sts_pair(xx: loaders.StsPairs, en: loaders.StsPairs, start: int = 0) -> Pairs:
    """(xx, en) translations of at most one sentence of each STS pair such that no two chosen sentences
    are an STS pair of the set (rows alternate between sentence 1 and 2; a row whose sentence was
    chosen before, or whose sentences are both excluded, is skipped)."""
    chosen: set[str] = set()
    excluded: set[str] = set()
    out: Pairs = []
    for r, (x1, x2, e1, e2) in enumerate(zip(xx.sent1, xx.sent2, en.sent1, en.sent2)):
        k1, k2 = normalize(e1), normalize(e2)
        if k1 in chosen or k2 in chosen:
            excluded.update((k1, k2))
            continue
        options = [(x1, e1, k1, k2), (x2, e2, k2, k1)]
        if (r + start) % 2:
            options.reverse()
        for x, e, k, partner in options:
            if k not in excluded:
                chosen.add(k)
                excluded.add(partner)
                out.append((x, e))
                break
    return out


def _stsb(root: Path, xx: str) -> Pairs:
    folder = root / "sts" / "stsb_multi_mt"
    out: Pairs = []
    for split in ("dev", "test"):
        a, b = (loaders.read_stsb_multi_mt(folder / f"stsb-{lang}-{split}.csv") for lang in (xx, "en"))
        if len(a) != len(b):
            raise loaders.DataFormatError(folder / f"stsb-{xx}-{split}.csv", None,
                                          f"{len(a)} rows, English has {len(b)}")
        out += one_sentence_per_sts_pair(a, b)
    return out


def _xnli(root: Path, xx: str) -> Pairs:
    a, b = (loaders.read_xnli_tsv(root / "xnli_dev" / f"dev-{lang}.tsv") for lang in (xx, "en"))
    if len(a.premise) != len(b.premise):  # row i of one language is the translation of row i of the other
        raise loaders.DataFormatError(root / "xnli_dev" / f"dev-{xx}.tsv", None,
                                      f"{len(a.premise)} rows, English has {len(b.premise)}")
    return list(dict.fromkeys(zip(a.premise, b.premise)))  # premises only, once each


def _xquad_questions(root: Path, xx: str) -> Pairs:
    b = xquad_r.questions(root, "en")
    a = xquad_r.questions(root, xx, set(b))
    return [(a[i], b[i]) for i in sorted(a)]


def _wmt(root: Path, xx: str) -> Pairs:
    out: Pairs = []
    for src in matching(root / "wmt", f"**/*.{xx}-en.src.{xx}") + matching(root / "wmt", f"**/*.en-{xx}.src.en"):
        name = src.name.split(".src.")[0]
        trg_lang = "en" if src.name.endswith(f".src.{xx}") else xx
        rows = loaders.read_parallel(src, src.parent / f"{name}.ref.A.{trg_lang}")
        out += rows if trg_lang == "en" else [(b, a) for a, b in rows]
    return out


def _iwslt(root: Path, xx: str) -> Pairs:
    return loaders.read_parallel(root / "iwslt14_deen_test" / f"test.{xx}", root / "iwslt14_deen_test" / "test.en")


def _multi30k(root: Path, xx: str) -> Pairs:
    out: Pairs = []
    for split in ("val", "test_2016_flickr", "test_2017_flickr", "test_2017_mscoco", "test_2018_flickr"):
        # every language has val (a missing one is an error); the test sets only some languages have
        if split == "val" or (root / "multi30k" / "raw" / f"{split}.{xx}.gz").exists():
            out += loaders.read_multi30k(root / "multi30k" / "raw", split, xx, "en")
    return out


# name -> (languages it has, reader); all of them are held out from every mini training corpus except where a
# config trains on them (MoCo-BERT's mini corpus trains on WMT zh-en, so its BUCC pool leaves WMT out).
POOLS: dict[str, tuple[set[str], Callable[[Path, str], Pairs]]] = {
    "stsb": ({"de", "es", "fr", "it", "ja", "nl", "pl", "pt", "ru", "zh"}, _stsb),
    "xnli": ({"ar", "bg", "de", "el", "es", "fr", "hi", "ru", "sw", "th", "tr", "ur", "vi", "zh"}, _xnli),
    "xquad": ({"ar", "de", "el", "es", "hi", "ru", "th", "tr", "vi", "zh"}, _xquad_questions),
    "wmt": ({"de", "zh"}, _wmt),
    "iwslt": ({"de"}, _iwslt),
    "multi30k": ({"de", "fr", "cs"}, _multi30k),
}


def reads(root: Path, spec: dict[str, Any]) -> list[Path]:
    """The files and folders of ``root`` (``data_root``) that :func:`build` reads with ``spec``: each pool's files
    for the configured pairs and the English-only sources (a glob pattern or a folder where it reads what is
    there)."""
    root, names = Path(root), set(spec.get("sources", [])) | set(spec.get("english_extra", []))
    langs = list(spec.get("pairs", []))
    stsb, m30 = root / "sts" / "stsb_multi_mt", root / "multi30k" / "raw"
    paths = [stsb / f"stsb-{xx}-{split}.csv" for xx in ["en", *langs] for split in ("dev", "test")
             if "stsb" in names and (xx == "en" or xx in POOLS["stsb"][0])]
    paths += [root / "xnli_dev" / f"dev-{xx}.tsv" for xx in ["en", *langs]
              if "xnli" in names and (xx == "en" or xx in POOLS["xnli"][0])]
    paths += [xquad_r.path(root, xx) for xx in ["en", *langs]
              if names & {"xquad", "xquad_contexts"} and (xx == "en" or xx in POOLS["xquad"][0])]
    paths += [root / "wmt" / "*"] if names & {"wmt", "wmt_de", "wmt_zh"} else []  # whatever test sets it holds
    paths += [root / "iwslt14_deen_test" / "test.de", root / "iwslt14_deen_test" / "test.en"] \
        if names & {"iwslt"} else []
    paths += [m30 / f"val.{xx}.gz" for xx in ["en", "de", *langs]
              if "multi30k" in names and xx in {"en", "de", "fr", "cs"}]
    return list(dict.fromkeys(paths))


def english_text(root: Path, source: str) -> list[str]:
    """English sentences of one source for English-only distractors (an unrelated genre to the pool)."""
    if source == "xquad_contexts":
        return [s for a in xquad_r.articles(root, "en") for p in a["paragraphs"] for s in p["sentences"]]
    xx = {"wmt_de": "de", "wmt_zh": "zh", "iwslt": "de", "multi30k": "de"}[source]
    reader = {"wmt_de": _wmt, "wmt_zh": _wmt, "iwslt": _iwslt, "multi30k": _multi30k}[source]
    return [en for _, en in reader(root, xx)]


def one_line(text: str) -> str:
    """White space (a few source texts hold tabs or line breaks) collapsed to single spaces."""
    return " ".join(text.split())


def unique_pairs(pairs: Pairs) -> Pairs:
    """Pairs whose normalised sides were not seen before (first occurrence kept)."""
    seen_a, seen_b, out = set(), set(), []
    for a, b in pairs:
        ka, kb = normalize(a), normalize(b)
        if ka and kb and ka not in seen_a and kb not in seen_b:
            seen_a.add(ka)
            seen_b.add(kb)
            out.append((a, b))
    return out


def _write_split(base: str, xx: str, gold: Pairs, src_only: list[str], en_only: list[str], rng: random.Random) -> None:
    src = [(a, i) for i, (a, _) in enumerate(gold)] + [(a, None) for a in src_only]
    trg = [(b, i) for i, (_, b) in enumerate(gold)] + [(b, None) for b in en_only]
    rng.shuffle(src)
    rng.shuffle(trg)
    src_id = {g: f"{xx}-{n:06d}" for n, (_, g) in enumerate(src, 1) if g is not None}
    trg_id = {g: f"en-{n:06d}" for n, (_, g) in enumerate(trg, 1) if g is not None}
    write_lines(f"{base}.{xx}", (f"{xx}-{n:06d}\t{t}" for n, (t, _) in enumerate(src, 1)))
    write_lines(f"{base}.en", (f"en-{n:06d}\t{t}" for n, (t, _) in enumerate(trg, 1)))
    write_lines(f"{base}.gold", sorted(f"{src_id[g]}\t{trg_id[g]}" for g in range(len(gold))))


def build(out: Path, root: Path, spec: dict[str, Any],
          exclude: LeakageFilter | None = None) -> tuple[list[str], dict[str, Any]]:
    """Write ``{xx}-en.{split}.{xx,en,gold}`` for every ``spec['pairs']`` language; return the pairs written
    and, per pair and split, the counts and gold shares (for the corpus manifest). A distractor candidate that
    ``exclude`` holds (the corpus's training sentences and its other evaluation sets) is not used; per pair,
    ``distractors_excluded`` counts them."""
    root, gold_n = Path(root), spec["gold_per_split"]
    english_pool = [one_line(e) for s in spec.get("english_extra", []) for e in english_text(root, s)]
    written, stats = [], {}
    for xx in spec["pairs"]:
        pool = unique_pairs([(one_line(a), one_line(b)) for name in spec["sources"] if xx in POOLS[name][0]
                             for a, b in POOLS[name][1](root, xx)])
        need = sum(gold_n.values())
        if len(pool) < need + 2 * len(SPLITS):
            raise ValueError(f"BUCC-style {xx}-en: {len(pool)} held-out pairs in {spec['sources']}, "
                             f"need more than {need}")
        rng = random.Random(f"{spec['seed']}-{xx}")
        rng.shuffle(pool)
        pool_en = {normalize(e) for _, e in pool}
        extra = list(dict.fromkeys(e for e in english_pool if normalize(e) and normalize(e) not in pool_en))
        rng.shuffle(extra)
        rest = pool[need:]
        src_rest, en_rest = [a for a, _ in rest[: len(rest) // 2]], [b for _, b in rest[len(rest) // 2:]]
        candidates = len(src_rest) + len(en_rest) + len(extra)
        if exclude is not None:  # a distractor seen in training or another evaluation set is no distractor
            src_rest, en_rest, extra = ([s for s in part if not exclude.leaks(s)]
                                        for part in (src_rest, en_rest, extra))
        g0, stats[f"{xx}-en"] = 0, {"pool_pairs": len(pool), "sources": spec["sources"],
                                    "distractors_excluded": candidates - len(src_rest) - len(en_rest) - len(extra)}
        for k, split in enumerate(SPLITS):  # distractors in proportion to each split's gold
            gold = pool[g0:g0 + gold_n[split]]
            g0 += gold_n[split]
            lo, hi = (round(len(src_rest) * sum(gold_n[s] for s in SPLITS[:k]) / need),
                      round(len(src_rest) * sum(gold_n[s] for s in SPLITS[:k + 1]) / need))
            src_only = src_rest[lo:hi]
            lo, hi = (round(len(en_rest) * sum(gold_n[s] for s in SPLITS[:k]) / need),
                      round(len(en_rest) * sum(gold_n[s] for s in SPLITS[:k + 1]) / need))
            en_only = en_rest[lo:hi]
            target = round(spec["english_per_split"] * gold_n[split] / max(gold_n.values()))  # sample: smaller
            n_extra = max(0, target - len(gold) - len(en_only))
            en_only = en_only + extra[:n_extra]
            extra = extra[n_extra:]
            _write_split(str(out / f"{xx}-en.{split}"), xx, gold, src_only, en_only,
                         random.Random(f"{spec['seed']}-{xx}-{split}"))
            n_src, n_en = len(gold) + len(src_only), len(gold) + len(en_only)
            stats[f"{xx}-en"][split] = {"gold": len(gold), "source_sentences": n_src, "english_sentences": n_en,
                                        "gold_share_source": round(len(gold) / n_src, 4),
                                        "gold_share_english": round(len(gold) / n_en, 4)}
        written.append(f"{xx}-en")
    return written, stats
