"""The rehearsal mirror: every file the paper scale downloads, in its real format and at its real URL path, with
tiny contents -- built from each experiment's rehearsal config, so the paper's download and conversion code runs
unchanged against it (``python -m common.rehearsal.mirror --out <dir>``, the workflow's ``mirror`` rule).

Layout of ``<dir>``:

* ``www/<host>/<path>`` -- what :class:`common.data.mirror_server.MirrorServer` serves;
* ``pins.json`` -- resource name -> sha256 of the served file. The mirror's files are generated, so their digests
  are the mirror's own: the downloader takes them in place of the real pins (md5 of sacreBLEU's registry, sha256 of
  XQuAD) and still checks every file. Tatoeba v1 is served from ``data_root`` (the real LASER files), so its real
  pins are checked as they are;
* ``faults.json`` -- request path -> ``503`` / ``cut``: one download of each kind is interrupted once, so a
  rehearsal exercises retry and resume;
* ``manual/<experiment>/`` -- the files a user places by hand at paper scale (WikiANN, CWMT, WIT3 archives), which
  the corpus rule copies to ``<corpus>/manual/`` at rehearsal scale;
* ``done.json`` -- written last.

Text comes from :mod:`common.rehearsal.phrasebook`; checkpoints from :mod:`common.rehearsal.checkpoints`.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import logging
import lzma
import shutil
import tarfile
import urllib.parse
import zipfile
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from common.config import LEADERBOARD, REHEARSAL_SCALES, load_config, papers
from common.data import corpora
from common.data import download as dl
from common.io import write_json
from common.rehearsal import phrasebook as pb

log = logging.getLogger(__name__)
LINES = 60  # sentences per training file and per test set: enough for every split and sampler, seconds to read
TarMode = Literal["w", "w:gz", "w:bz2", "w:xz"]


# --------------------------------------------------------------------------- containers
def zip_bytes(members: Mapping[str, bytes | str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():  # a fixed time stamp: the same members make the same bytes
            z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)
    return buf.getvalue()


def tar_bytes(members: Mapping[str, bytes | str], mode: TarMode = "w:gz") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as t:
        for name, data in members.items():
            raw = data.encode() if isinstance(data, str) else data
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(raw), 0
            t.addfile(info, io.BytesIO(raw))
    return buf.getvalue()


def container(name: str, members: Mapping[str, bytes | str]) -> bytes:
    """An archive of the kind its file name says (``.zip``, ``.tar.gz`` / ``.tgz``, ``.tar.bz2``, ``.tar``)."""
    if name.endswith(".zip"):
        return zip_bytes(members)
    modes: tuple[tuple[str, TarMode], ...] = ((".tar.gz", "w:gz"), (".tgz", "w:gz"), (".tar.bz2", "w:bz2"),
                                              (".tar", "w"))
    for suffix, mode in modes:
        if name.endswith(suffix):
            return tar_bytes(members, mode)
    raise ValueError(f"{name}: not an archive name")


def lines(rows: Iterable[str]) -> str:
    return "".join(f"{r}\n" for r in rows)


class Mirror:
    def __init__(self, root: Path, data_root: Path):
        self.root, self.data_root = Path(root), Path(data_root)
        self.www = self.root / "www"
        self.pins: dict[str, str] = {}
        self.faults: dict[str, str] = {}

    def from_data_root(self, relative: Path) -> bytes:
        """A real file of ``data_root`` that the mirror serves as it is."""
        return (self.data_root / relative).read_bytes()

    def put(self, res: dl.Resource, data: bytes | str) -> None:
        """Serve ``data`` at ``res``'s URL and pin it under ``res``'s name."""
        raw = data.encode() if isinstance(data, str) else data
        parts = urllib.parse.urlsplit(res.url)
        path = self.www / parts.netloc / parts.path.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(raw)
        digest = hashlib.sha256(raw).hexdigest()
        if self.pins.get(res.name, digest) != digest:
            raise ValueError(f"{res.name}: two different files for one resource")
        self.pins[res.name] = digest

    def fault(self, res: dl.Resource, kind: str) -> None:
        parts = urllib.parse.urlsplit(res.url)
        self.faults[f"/{parts.netloc}{parts.path}"] = kind

    def manual(self, experiment: str, relative: str, data: bytes | str) -> None:
        path = self.root / "manual" / experiment / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)

    def finish(self) -> None:
        write_json(self.root / "pins.json", dict(sorted(self.pins.items())))
        write_json(self.root / "faults.json", self.faults)
        write_json(self.root / "done.json", {"resources": len(self.pins), "faults": self.faults})


# --------------------------------------------------------------------------- shared resources
def opus(m: Mirror, corpus: str, version: str, xx: str, yy: str = "en") -> None:
    a, b = sorted((xx, yy))
    rows = pb.pairs(a, f"opus/{corpus}", LINES, b)
    m.put(dl.opus_moses(corpus, version, xx, yy), zip_bytes({
        f"{corpus}.{a}-{b}.{a}": lines(r[0] for r in rows), f"{corpus}.{a}-{b}.{b}": lines(r[1] for r in rows),
        "README": f"rehearsal mirror of OPUS {corpus} {version}\n"}))


def tatoeba(m: Mirror, pin_file: str, languages: list[str] | None = None) -> None:
    """The real LASER Tatoeba v1 files from ``data_root`` (their pinned digests hold)."""
    for lang, sha in dl.tatoeba_pins(pin_file, languages).items():
        for res in dl.tatoeba(lang, sha["src"], sha["eng"]):
            m.put(res, m.from_data_root(Path("tatoeba_v1") / Path(res.name).name))


def bucc(m: Mirror, langs: list[str]) -> None:
    for xx in langs:
        for split, s in (("sample-gold", "sample"), ("training-gold", "training"), ("test", "test")):
            gold = pb.pairs(xx, f"bucc/{s}", 12)
            src = gold + [(x, "") for x, _ in pb.pairs(xx, f"bucc/{s}/src-only", 24)]
            trg = [e for _, e in gold] + pb.sentences("en", f"bucc/{s}/{xx}/en-only", 36)
            members = {f"bucc2018/{xx}-en/{xx}-en.{s}.{xx}": lines(f"{xx}-{i:06d}\t{x}" for i, (x, _) in
                                                                   enumerate(src, 1)),
                       f"bucc2018/{xx}-en/{xx}-en.{s}.en": lines(f"en-{i:06d}\t{e}" for i, e in enumerate(trg, 1))}
            if split != "test":
                members[f"bucc2018/{xx}-en/{xx}-en.{s}.gold"] = lines(f"{xx}-{i:06d}\ten-{i:06d}"
                                                                        for i in range(1, len(gold) + 1))
            m.put(dl.bucc2018(f"{xx}-en", split), tar_bytes(members, "w:bz2"))


NLI_LABELS = ("entailment", "neutral", "contradiction")


def nli_rows(lang: str, key: str, n: int) -> list[tuple[str, str, str]]:
    """(premise, hypothesis, label): the hypothesis of a pair is another rendering of a premise's meaning for
    entailment; the labels cycle (the rehearsal checks the readers and the fine-tuning, not the task)."""
    prem = pb.sentences(lang, f"{key}/premise", n)
    hyp = pb.sentences(lang, f"{key}/hypothesis", n)
    return [(p, h, NLI_LABELS[i % 3]) for i, (p, h) in enumerate(zip(prem, hyp))]


XNLI_LANGUAGES = ("ar", "bg", "de", "el", "en", "es", "fr", "hi", "ru", "sw", "th", "tr", "ur", "vi", "zh")


def xnli(m: Mirror) -> None:
    """XNLI 1.0's test set, every language (the archive is one file, the same for every experiment)."""
    header = "language\tgold_label\tsentence1_binary_parse\tsentence2_binary_parse\tsentence1\tsentence2\tpromptID"
    # 220 items per language: HICTL's Figure 4 draws 10 sets of 20 parallel sentences from them
    rows = [f"{lang}\t{lab}\t()\t()\t{p}\t{h}\t{i}" for lang in XNLI_LANGUAGES
            for i, (p, h, lab) in enumerate(nli_rows(lang, "xnli/test", 220))]
    m.put(dl.xnli(), zip_bytes({"XNLI-1.0/xnli.test.tsv": lines([header, *rows]),
                                "XNLI-1.0/xnli.dev.tsv": lines([header])}))


def glue_nli(m: Mirror, res: dl.Resource, member: str) -> None:
    """MultiNLI / SNLI train in their release layout (a header naming gold_label, sentence1, sentence2)."""
    header = "gold_label\tsentence1_binary_parse\tsentence2_binary_parse\tsentence1\tsentence2"
    rows = [f"{lab}\t()\t()\t{p}\t{h}" for p, h, lab in nli_rows("en", member, 90)] + ["-\t()\t()\tNo label.\tNone."]
    m.put(res, zip_bytes({member: lines([header, *rows])}))


# --------------------------------------------------------------------------- per corpus kind
def paper(m: Mirror, spec: dict[str, Any]) -> None:
    """DAP (common.data.corpus_paper.prepare_paper): OPUS bitext, Tatoeba, BUCC, XNLI, MultiNLI."""
    for i, xx in enumerate(spec["opus_languages"]):
        # the first corpus of each language, and every corpus for the first language; the rest are 404s, which the
        # preparation skips and lists (OPUS offers no corpus for every language)
        for corpus, version in spec["opus_corpora"] if i == 0 else spec["opus_corpora"][:1]:
            opus(m, corpus, version, xx)
    first = spec["opus_corpora"][0]
    m.fault(dl.opus_moses(first[0], first[1], spec["opus_languages"][0], "en"), "cut")
    tatoeba(m, "tatoeba_v1.sha256.yaml", spec.get("tatoeba_languages"))
    bucc(m, spec["bucc_pairs"])
    xnli(m)
    glue_nli(m, dl.multinli(), "multinli_1.0/multinli_1.0_train.txt")
    m.fault(dl.xnli(), "503")


def paper_enzh(m: Mirror, spec: dict[str, Any], experiment: str) -> None:
    """MoCo-BERT (common.data.corpus_enzh): OPUS zh-en corpora, CWMT placed by hand, Tatoeba cmn, BUCC zh, NLI."""
    for c in spec["corpora"]:
        if c["kind"] == "opus":
            opus(m, c["corpus"], c["version"], "zh")
        else:
            rows = pb.pairs("zh", f"cwmt/{c['name']}", LINES)
            m.manual(experiment, f"{c['name']}.zh", lines(r[0] for r in rows))
            m.manual(experiment, f"{c['name']}.en", lines(r[1] for r in rows))
    tatoeba(m, "tatoeba_v1.sha256.yaml", ["cmn"])
    bucc(m, spec["bucc_pairs"])
    glue_nli(m, dl.multinli(), "multinli_1.0/multinli_1.0_train.txt")
    glue_nli(m, dl.snli(), "snli_1.0/snli_1.0_train.txt")


def paper_vmsst(m: Mirror, spec: dict[str, Any]) -> None:
    """VMSST (common.data.corpus_vmsst): OPUS bitext with English and Spanish pivots, Tatoeba (all 112), BUCC,
    PAQ, NQ and MKQA questions."""
    for lang in spec["languages"]:
        if lang == "en":
            continue
        for pivot in (["en"] if lang == "es" else spec["pivots"]):
            if lang != pivot:
                corpus, version = spec["opus_corpora"][0]
                opus(m, corpus, version, lang, pivot)
    tatoeba(m, "tatoeba_v1_all.sha256.yaml", spec.get("tatoeba_languages"))
    bucc(m, spec["bucc_pairs"])
    answers = pb.sentences("en", "questions/answers", 40)
    questions = pb.sentences("en", "questions/paq", 40)
    paq = lines(json.dumps({"question": q, "answer": [a.rstrip(".")]}) for q, a in zip(questions, answers))
    m.put(dl.paq(), tar_bytes({"PAQ/PAQ.filtered.jsonl": paq}))
    m.put(dl.nq_test(), lines(f"{q}\t['{a.rstrip('.')}']" for q, a in list(zip(questions, answers))[:20]))
    mkqa = []
    for i, (q, a) in enumerate(list(zip(questions, answers))[:20]):
        queries = {lang: pb.pairs(lang.split("_")[0], "mkqa", 20)[i][0] if lang != "en" else q
                   for lang in spec["mkqa_languages"]}
        mkqa.append(json.dumps({"example_id": i, "queries": queries,
                                "answers": {"en": [{"type": "entity", "text": a.rstrip("."), "aliases": []}]}},
                               ensure_ascii=False))
    m.put(dl.mkqa(), gzip.compress(lines(mkqa).encode(), mtime=0))
    m.fault(dl.paq(), "cut")


def paper_hictl(m: Mirror, spec: dict[str, Any], experiment: str) -> None:
    """HICTL (common.data.corpus_hictl): OPUS bitext (Table 8), CC-100, the XTREME tasks, Tatoeba, BUCC and the
    NMT data of section 4.2."""
    from common.data import xtreme

    for lang, entry in spec["parallel"].items():
        corpus, version = entry["corpora"][0]
        opus(m, corpus, version, lang)
    for lang in spec["monolingual"]["languages"]:
        docs = pb.sentences(lang, "cc100", 30)
        text = "".join(f"{s}\n" + ("\n" if i % 4 == 3 else "") for i, s in enumerate(docs))
        m.put(xtreme.cc100(lang), lzma.compress(text.encode()))
    m.fault(xtreme.cc100(spec["monolingual"]["languages"][0]), "503")
    x = spec["xtreme"]
    xnli(m)
    glue_nli(m, dl.multinli(), "multinli_1.0/multinli_1.0_train.txt")
    _xtreme_tasks(m, x, experiment)
    tatoeba(m, "tatoeba_v1.sha256.yaml", spec.get("tatoeba_languages"))
    bucc(m, spec["bucc_pairs"])
    if spec.get("translation"):
        translation(m, spec["translation"], experiment)


def squad_json(lang: str, key: str, n: int, with_id: str = "") -> str:
    """SQuAD v1.1 JSON: each context is three sentences, the question is a rendering of the second one's meaning
    in the same language, the answer the second sentence's first word."""
    paras = []
    for i in range(n):
        ctx = pb.sentences(lang, f"{key}/{i}", 3)
        answer = ctx[1].split()[0]
        start = len(ctx[0]) + 1
        question = pb.sentences(lang, f"{key}/{i}/q", 1)[0].rstrip(".") + "?"
        paras.append({"title": f"{key}-{i}", "paragraphs": [{"context": " ".join(ctx), "qas": [
            {"id": f"{with_id}{key.replace('/', '-')}-{i}", "question": question,
             "answers": [{"text": answer, "answer_start": start}]}]}]})
    return json.dumps({"version": "1.1", "data": paras}, ensure_ascii=False)


def _xtreme_tasks(m: Mirror, x: dict[str, Any], experiment: str) -> None:
    from common.data import xtreme

    langs = x["pawsx_languages"]
    paws = {"x-final/en/train.tsv": _pawsx_tsv("en", "train", 40)}
    for lang in langs:
        paws[f"x-final/{lang}/test_2k.tsv"] = _pawsx_tsv(lang, "test", 20)
        if lang != "en":
            paws[f"x-final/{lang}/translated_train.tsv"] = _pawsx_tsv(lang, "translated_train", 20)
    m.put(xtreme.pawsx(), tar_bytes(paws))
    ud = {f"ud-treebanks-v2.5/UD_{lang}-Rehearsal/{lang}_rehearsal-ud-test.conllu": _conllu(lang, "test", 10)
          for lang in x["pos_languages"]}
    ud["ud-treebanks-v2.5/UD_en-Rehearsal/en_rehearsal-ud-train.conllu"] = _conllu("en", "train", 30)
    m.put(xtreme.udpos(), tar_bytes(ud))
    for lang in x["ner_languages"]:
        splits = ("train", "dev", "test") if lang == "en" else ("dev", "test")
        m.manual(experiment, f"panx_dataset/{lang}.tar.gz", tar_bytes(
            {split: _panx(lang, split, 30 if split == "train" else 10) for split in splits}))
    m.put(xtreme.squad_train(), squad_json("en", "squad/train", 30))
    for lang in x["xquad_languages"]:
        m.put(xtreme.xquad(lang), squad_json(lang, "xquad", 8))
        if lang != "en" and x.get("translate_train"):
            m.put(xtreme.squad_translate_train(lang), squad_json(lang, "squad/translate-train", 20))
    m.put(xtreme.mlqa(), zip_bytes({f"MLQA_V1/test/test-context-{lang}-question-{lang}.json":
                                    squad_json(lang, "mlqa", 8) for lang in x["mlqa_languages"]}))
    names = {v: k for k, v in xtreme.TYDIQA_LANGUAGES.items()}
    m.put(xtreme.tydiqa("train"), squad_json("en", "tydiqa/train", 20, with_id="english-"))
    dev = [json.loads(squad_json(code, "tydiqa/dev", 4, with_id=f"{name}-"))["data"] for code, name in
           sorted(names.items()) if code in ("en", "ar", "ru")]
    m.put(xtreme.tydiqa("dev"), json.dumps({"version": "tydiqa", "data": [a for d in dev for a in d]},
                                           ensure_ascii=False))
    if x.get("translate_train"):
        header = "premise\thypo\tlabel"
        m.put(xtreme.xnli_mt(), zip_bytes({
            f"XNLI-MT-1.0/multinli/multinli.train.{lang}.tsv":
                lines([header, *(f"{p}\t{h}\t{'contradictory' if lab == 'contradiction' else lab}"
                                 for p, h, lab in nli_rows(lang, "xnli-mt", 30))])
            for lang in XNLI_LANGUAGES if lang != "en"}))


def _pawsx_tsv(lang: str, key: str, n: int) -> str:
    a = pb.sentences(lang, f"pawsx/{key}/a", n)
    b = pb.sentences(lang, f"pawsx/{key}/b", n)
    return lines(["id\tsentence1\tsentence2\tlabel", *(f"{i}\t{x}\t{y}\t{i % 2}" for i, (x, y) in
                                                       enumerate(zip(a, b), 1))])


TAGS = ("NOUN", "VERB", "ADJ", "DET", "PUNCT")


def _conllu(lang: str, key: str, n: int) -> str:
    out = []
    for i, s in enumerate(pb.sentences(lang, f"ud/{key}", n), 1):
        words = s.rstrip(".").split() + ["."]
        out.append(f"# sent_id = {i}\n# text = {s}\n" + "".join(
            f"{j}\t{w}\t{w.lower()}\t{TAGS[(len(w) + j) % len(TAGS)] if w != '.' else 'PUNCT'}\t_\t_\t0\tdep\t_\t_\n"
            for j, w in enumerate(words, 1)) + "\n")
    return "".join(out)


NER = ("O", "B-PER", "I-PER", "B-LOC", "B-ORG")


def _panx(lang: str, key: str, n: int) -> str:
    out = []
    for s in pb.sentences(lang, f"panx/{key}", n):
        out += [f"{lang}:{w}\t{NER[len(w) % len(NER)]}" for w in s.rstrip(".").split()] + [""]
    return lines(out)


# --------------------------------------------------------------------------- translation (HICTL section 4.2)
def translation(m: Mirror, spec: dict[str, Any], experiment: str) -> None:
    """Every archive the declarations of :mod:`common.data.translation_paper` read for ``spec``'s languages, with
    each declared member in its declared format; the files to place by hand go to ``manual/``."""
    from common.data import translation_paper as tp

    # resource -> member -> (fmt, rows)
    members: dict[dl.Resource, dict[str, tuple[str, list[Any]]]] = defaultdict(dict)
    for xx in spec["languages"]:
        lang = tp.LANGUAGES[xx]
        sets = [s for s in (lang.train, *(ts for n, ts in lang.alternatives.items()
                                          if n in spec.get("alternatives", []))) if s]
        # a training set that holds out every k-th pair for validation gets 2k pairs, so validation is not empty
        sizes = {b: max(LINES // 2, 2 * ts.valid_every) for ts in sets for b in ts.train}
        bitexts = [b for ts in sets for b in (*ts.train, *ts.valid)]
        bitexts += [p for tests in lang.tests.values() for t in tests.values()
                    for p in (t.parts if isinstance(t, tp.Concat) else (t,))]
        for b in bitexts:  # a member read by several bitexts (a test set in both directions) is written once
            rows = pb.pairs(xx, f"translation/{b.src.resource.name}/{b.src.member}", sizes.get(b, LINES // 2))
            if b.src.fmt.startswith("tsv"):  # both columns of one file, in the file's column order
                ordered = rows if b.src.fmt == "tsv0" else [(e, x) for x, e in rows]
                members[b.src.resource].setdefault("", ("tsv", ordered))
                continue
            for side, column in ((b.src, 0), (b.tgt, 1)):
                members[side.resource].setdefault(side.member or "", (side.fmt, [r[column] for r in rows]))
    for res, files in members.items():
        file_name = Path(res.name).name if res.revision == tp.MANUAL else urllib.parse.urlsplit(res.url).path
        file_name = file_name.rsplit("/", 1)[-1]
        encoded = {name: _side_file(name or file_name, fmt, rows) for name, (fmt, rows) in files.items()}
        if res.revision == tp.MANUAL:
            m.manual(experiment, file_name, _pack(file_name, encoded))
        else:
            m.put(res, _pack(file_name, encoded))


def _side_file(member: str, fmt: str, rows: list[Any]) -> bytes:
    """One side's file in its declared format (``tsv``: the two-column file of both sides)."""
    if fmt == "tsv":
        text = lines(f"{a}\t{b}" for a, b in rows)
    elif fmt == "seg":
        text = ('<?xml version="1.0" encoding="UTF-8"?>\n<mteval>\n<doc docid="rehearsal" genre="news">\n'
                + lines(f'<seg id="{i}"> {s} </seg>' for i, s in enumerate(rows, 1)) + "</doc>\n</mteval>\n")
    elif fmt == "tags":  # talk metadata lines (skipped by the reader), then the sentences
        text = "<url>http://rehearsal</url>\n<talkid>1</talkid>\n" + lines(rows)
    else:
        text = lines(rows)
    raw = text.encode()
    return gzip.compress(raw, mtime=0) if member.endswith(".gz") else raw


def _pack(file_name: str, members: dict[str, bytes]) -> bytes:
    if list(members) == [""]:  # the file itself, no archive
        return members[""]
    return container(file_name, members)


# --------------------------------------------------------------------------- building
EXPERIMENTS = (*papers("rehearsal"), LEADERBOARD)  # every paper with a rehearsal config, and the leaderboard


def populate(m: Mirror, experiments: Iterable[str] = EXPERIMENTS, scale: str = "rehearsal") -> list[str]:
    """Add every download of the experiments' configs at ``scale`` to ``m`` (corpora and hand-placed files); returns
    the pinned Hub models they load. At ``rehearsal`` this is the mirror's content; a :class:`Listing` at ``paper``
    is what ``common.workflow.preflight`` checks."""
    from common.models import hub

    models: list[str] = []
    for experiment in experiments:
        cfg = load_config(experiment, scale)
        corpus = cfg["corpus"]
        kind, spec = corpus["kind"], corpus.get(corpus["kind"], {})
        if kind == "paper":
            paper(m, spec)
        elif kind == "paper_enzh":
            paper_enzh(m, spec, experiment)
        elif kind == "paper_vmsst":
            paper_vmsst(m, spec)
        elif kind == "paper_hictl":
            paper_hictl(m, spec, experiment)
        else:
            raise ValueError(f"{experiment}: a {scale} corpus must be a paper corpus, not {kind!r}")
        models += hub.models_of(cfg)
    return list(dict.fromkeys(models))


class Listing(Mirror):
    """A mirror that keeps only what would be downloaded (resource name -> URL) and placed by hand, no bytes."""

    def __init__(self, data_root: Path):
        super().__init__(Path("/nonexistent"), data_root)
        self.resources: dict[str, dl.Resource] = {}
        self.manual_files: dict[str, list[str]] = defaultdict(list)
        self.data_root_files: list[Path] = []  # what a mirror would serve from data_root

    def from_data_root(self, relative: Path) -> bytes:
        self.data_root_files.append(self.data_root / relative)
        return b""

    def put(self, res: dl.Resource, data: bytes | str) -> None:
        self.resources[res.name] = res

    def manual(self, experiment: str, relative: str, data: bytes | str) -> None:
        self.manual_files[experiment].append(relative)


def data_root_paths(experiments: Iterable[str], scale: str, data_root: Path) -> list[Path]:
    """What the jobs of ``experiments`` at ``scale`` read from ``data_root``: what their corpus kinds read in place
    (:func:`common.data.corpora.in_place`: the English STS and STS17 sets), and at the rehearsal scales the real files
    that the mirror serves from there (Tatoeba v1, which the paper scale downloads). The mirror rule builds every
    experiment's mirror at once, so those are every experiment's, whichever are run."""
    corpus = {e: load_config(e, scale)["corpus"] for e in experiments}
    paths = [p for e, c in corpus.items() for p in corpora.in_place(c["kind"], data_root, c.get(c["kind"]))]
    if scale in REHEARSAL_SCALES:
        listing = Listing(data_root)
        populate(listing, EXPERIMENTS, "rehearsal")  # the mirror is built from the rehearsal configs
        paths += listing.data_root_files
    return list(dict.fromkeys(paths))


def build(out: Path, data_root: Path, experiments: Iterable[str] = EXPERIMENTS) -> Mirror:
    """The mirror of every experiment's rehearsal config (corpora, manual files and Hub checkpoints)."""
    from common.models import hub
    from common.rehearsal import checkpoints

    if out.exists():
        shutil.rmtree(out)
    m = Mirror(out, data_root)
    models = populate(m, experiments)
    for name in models:
        model = hub.model(name)
        for file, data in checkpoints.tiny_checkpoint(model).items():
            m.put(dl.Resource(f"{model.folder}/{file}", model.url(file), revision=model.revision), data)
    first = hub.model(models[0])
    m.fault(dl.Resource("", first.url(first.files[-1]), revision="x"), "cut")
    m.finish()
    log.info("rehearsal mirror: %d files, faults %s -> %s", len(m.pins), m.faults, out)
    return m


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m common.rehearsal.mirror", description=__doc__.splitlines()[0])
    p.add_argument("--data-root", required=True, help="the shared data folder (Tatoeba v1 is served from it)")
    p.add_argument("--out", required=True)
    p.add_argument("--experiment", action="append", default=None, help="only these (default: every experiment)")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    build(Path(a.out), Path(a.data_root), tuple(a.experiment or EXPERIMENTS))


if __name__ == "__main__":
    main()
