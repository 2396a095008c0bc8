"""Paper-scale downloads: fetch, verify, extract, convert to the loaders' formats.

Every resource is pinned, in one of three ways, and a mismatch is an error naming the file:

* ``sha256`` — the expected digest of the downloaded file (Tatoeba v1: the digests of the
  LASER files at commit 74bc6ae7, as recorded in the shared data manifests);
* ``md5`` — the digest another project publishes for the file (sacreBLEU's registry of WMT / IWSLT test sets,
  :mod:`common.data.translation_paper`), checked on every download;
* ``revision`` — a URL that names an immutable version (OPUS ``/vYYYY/`` releases, a git
  commit). Its digest is written to ``downloads.lock.json`` on first download, and any later
  download must match it (trust on first use, stated in the lock file).

``base_url`` replaces the scheme and host of every URL, so tests serve files in the real
formats from a local HTTP server, and so can a site mirror. ``pins`` (resource name -> sha256)
replaces the pins of the named resources: the rehearsal's mirror (:mod:`common.rehearsal`) serves
generated files in the real formats, whose digests are its own; every check still runs.

A download is written to ``<name>.part`` beside its destination and renamed when complete and
verified, so a file that exists is whole. An interrupted transfer (connection reset, a short read,
HTTP 5xx) is retried ``retries`` times, resuming from the bytes already received with an HTTP
``Range`` request when the server honours it (206), from the start otherwise; a partial file left by
a killed process is resumed the same way. A digest mismatch after a resumed download restarts it
once from zero before it is an error.
"""
from __future__ import annotations

import ast
import csv
import hashlib
import http.client
import io
import itertools
import json
import logging
import os
import shutil
import tarfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from common.data.cleaning import PairCleaner
from common.io import DataFormatError, atomic_write, iter_lines, read_json, read_lines, sha256_file, write_json

log = logging.getLogger(__name__)


class ChecksumError(RuntimeError):
    """A download whose digest is not its pin; ``got`` and ``expected`` are sha256 digests (or md5 digests, when the
    md5 pin failed) and ``url`` is where the bytes came from."""

    def __init__(self, message: str, got: str = "", expected: str = "", url: str = ""):
        super().__init__(message)
        self.got, self.expected, self.url = got, expected, url


@dataclass(frozen=True)
class Resource:
    name: str
    url: str
    sha256: str | None = None
    revision: str | None = None
    md5: str | None = None

    def __post_init__(self) -> None:
        if not (self.sha256 or self.md5 or self.revision):
            raise ValueError(f"{self.name}: a download must be pinned by sha256, md5 or a revision in its URL")


def _rebase(url: str, base_url: str | None) -> str:
    if not base_url:
        return url
    parts = urllib.parse.urlsplit(url)
    return base_url.rstrip("/") + "/" + parts.netloc + parts.path


class Downloader:
    def __init__(self, dest: str | Path, base_url: str | None = None, timeout: float = 60.0, retries: int = 3,
                 retry_wait: float = 1.0, pins: dict[str, str] | None = None):
        self.dest = Path(dest)
        self.base_url, self.timeout = base_url, timeout
        self.retries, self.retry_wait = retries, retry_wait
        self.pins = pins or {}
        self.lock_path = self.dest / "downloads.lock.json"
        self.lock = read_json(self.lock_path) if self.lock_path.exists() else {}

    def fetch(self, res: Resource) -> Path:
        """Download ``res`` into ``dest/<name>`` (once), verified against its pin."""
        if res.name in self.pins:
            res = Resource(res.name, res.url, sha256=self.pins[res.name], revision=res.revision)
        path = self.dest / res.name
        expected = res.sha256 or self.lock.get(res.name, {}).get("sha256")
        if path.exists() and expected and sha256_file(path) == expected:
            return path
        if path.exists() and res.md5 and not expected and _md5(path) == res.md5:
            return path
        url = _rebase(res.url, self.base_url)
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_name(path.name + ".part")
        for fresh in (False, True):  # a resumed download whose digest fails is fetched once more from zero
            if fresh:
                part.unlink(missing_ok=True)
            self._transfer(url, part)
            digest, md5 = sha256_file(part), _md5(part)
            if (not expected or digest == expected) and (not res.md5 or md5 == res.md5):
                break
            log.warning("%s: digest mismatch after the download%s", res.name, "" if fresh else "; fetching anew")
        else:
            part.unlink(missing_ok=True)
            if expected and digest != expected:
                raise ChecksumError(f"{res.name}: sha256 {digest} from {url} does not match the pinned {expected}",
                                    digest, expected, url)
            raise ChecksumError(f"{res.name}: md5 {md5} from {url} does not match the pinned {res.md5}", md5,
                                str(res.md5), url)
        os.replace(part, path)
        if not (res.sha256 or res.md5):
            self.lock[res.name] = {"sha256": digest, "revision": res.revision, "url": res.url,
                                   "note": "recorded on first download (trust on first use)"}
            write_json(self.lock_path, self.lock)
        log.info("downloaded %s (%s)", res.name, digest[:12])
        return path

    def forget(self, name: str) -> None:
        """Drop the download ``name`` and the digest recorded for it on first download: the next :meth:`fetch`
        downloads it afresh and records what it gets (a cached file found corrupt after it was recorded)."""
        (self.dest / name).unlink(missing_ok=True)
        if self.lock.pop(name, None) is not None:
            write_json(self.lock_path, self.lock)

    def _transfer(self, url: str, part: Path) -> None:
        """Fill ``part`` with the bytes of ``url``, resuming what is there; retried on transient failures.
        HTTP errors other than 5xx (a 404: the resource is not offered) are raised at once."""
        for attempt in range(self.retries + 1):
            have = part.stat().st_size if part.exists() else 0
            request = urllib.request.Request(url, headers={"Range": f"bytes={have}-"} if have else {})
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as resp:
                    resumed = have and resp.status == 206
                    with open(part, "ab" if resumed else "wb") as out:
                        while block := resp.read(1 << 20):
                            out.write(block)
                    if (total := resp.headers.get("Content-Length")) is not None and \
                            part.stat().st_size - (have if resumed else 0) < int(total):
                        raise http.client.IncompleteRead(b"", int(total))
                if resumed:
                    log.info("%s: resumed at byte %d", url, have)
                return
            except urllib.error.HTTPError as exc:
                if exc.code == 416 and have:  # the range starts at the end: the partial file is whole
                    return
                if exc.code < 500 or attempt == self.retries:
                    raise
                log.warning("%s: HTTP %d, retrying (%d/%d)", url, exc.code, attempt + 1, self.retries)
            except (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError) as exc:
                if attempt == self.retries:
                    raise
                log.warning("%s: %s, retrying (%d/%d)", url, exc, attempt + 1, self.retries)
            time.sleep(self.retry_wait * 2 ** attempt)


def _md5(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, lambda: hashlib.md5(usedforsecurity=False)).hexdigest()


# --------------------------------------------------------------------------- archive readers
def extract(archive: Path, out_dir: Path) -> Path:
    """Extract a .zip / .tar / .tar.gz / .tar.bz2 safely (no absolute paths, no '..')."""
    out_dir.mkdir(parents=True, exist_ok=True)
    name = archive.name
    if name.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            members = z.namelist()
            _check_members(archive, members)
            z.extractall(out_dir)
    elif name.endswith((".tar.gz", ".tgz", ".tar.bz2", ".tar")):
        with tarfile.open(archive) as t:
            _check_members(archive, t.getnames())
            t.extractall(out_dir, filter="data")
    else:
        raise ValueError(f"{archive}: unknown archive type")
    return out_dir


def _check_members(archive: Path, names: list[str]) -> None:
    for n in names:
        if n.startswith("/") or ".." in Path(n).parts:
            raise ValueError(f"{archive}: unsafe member path {n!r}")


# --------------------------------------------------------------------------- corpora
OPUS_BASE = "https://object.pouta.csc.fi"
LASER_COMMIT = "74bc6ae7ffb7cba670fe0f428d0ede9f666fb821"


def opus_moses(corpus: str, version: str, l1: str, l2: str) -> Resource:
    """OPUS Moses-format bitext, e.g. ``Europarl v8 de-en`` (languages in alphabetical order)."""
    a, b = sorted((l1, l2))
    return Resource(f"opus/{corpus}.{version}.{a}-{b}.txt.zip",
                    f"{OPUS_BASE}/OPUS-{corpus}/{version}/moses/{a}-{b}.txt.zip", revision=f"{corpus}/{version}")


def read_opus_moses(zip_path: Path, corpus: str, l1: str, l2: str) -> list[tuple[str, str]]:
    """(l1, l2) pairs from an OPUS moses zip (members ``{Corpus}.{a}-{b}.{a}`` and ``.{b}``)."""
    return list(iter_opus_pairs(zip_path, corpus, l1, l2))


def tatoeba(lang: str, sha_src: str, sha_eng: str) -> list[Resource]:
    base = f"https://raw.githubusercontent.com/facebookresearch/LASER/{LASER_COMMIT}/data/tatoeba/v1"
    return [Resource(f"tatoeba/tatoeba.{lang}-eng.{lang}", f"{base}/tatoeba.{lang}-eng.{lang}", sha256=sha_src),
            Resource(f"tatoeba/tatoeba.{lang}-eng.eng", f"{base}/tatoeba.{lang}-eng.eng", sha256=sha_eng)]


def tatoeba_pins(pin_file: str, languages: list[str] | None = None) -> dict[str, dict[str, str]]:
    """The pinned digests of the Tatoeba v1 languages a paper evaluates (``tatoeba_v1.sha256.yaml``: XTREME's 36,
    ``tatoeba_v1_all.sha256.yaml``: all 112), or of ``languages`` among them (a corpus spec's
    ``tatoeba_languages``: the rehearsal's few)."""
    from common.config import load_yaml

    pins: dict[str, dict[str, str]] = load_yaml(Path(__file__).parent / pin_file)
    if languages is None:
        return pins
    unknown = sorted(set(languages) - set(pins))
    if unknown:
        raise KeyError(f"tatoeba_languages {unknown} have no pin in {pin_file}")
    return {lang: pins[lang] for lang in languages}


def bucc2018(pair: str, split: str) -> Resource:
    """BUCC 2018 shared-task archive, split in {sample-gold, training-gold, test}."""
    return Resource(f"bucc/bucc2018-{pair}.{split}.tar.bz2",
                    f"https://comparable.limsi.fr/bucc2018/bucc2018-{pair}.{split}.tar.bz2", revision="bucc2018")


def xnli() -> Resource:
    return Resource("xnli/XNLI-1.0.zip", "https://dl.fbaipublicfiles.com/XNLI/XNLI-1.0.zip", revision="XNLI-1.0")


def _header(path: Path, line: str, names: tuple[str, ...]) -> dict[str, int]:
    """Column positions of ``names`` in a TSV header line; a missing one is an error naming the file."""
    header = line.split("\t")
    missing = [c for c in names if c not in header]
    if missing:
        raise DataFormatError(path, 1, f"no column {missing} in the header {header}")
    return {c: header.index(c) for c in names}


def split_xnli_test(path: Path, out_dir: Path) -> list[str]:
    """``xnli.test.tsv`` (all languages; header with language, gold_label, sentence1, sentence2)
    -> ``test-{lang}.tsv`` in the XTREME layout read by ``loaders.read_xnli_tsv``."""
    lines = read_lines(path)
    width = len(lines[0].split("\t")) if lines else 0
    col = _header(path, lines[0] if lines else "", ("language", "gold_label", "sentence1", "sentence2"))
    by_lang: dict[str, list[str]] = {}
    for lineno, line in enumerate(lines[1:], start=2):
        cols = line.split("\t")
        if len(cols) != width:
            raise DataFormatError(path, lineno, f"expected {width} columns, found {len(cols)}")
        by_lang.setdefault(cols[col["language"]], []).append(
            f"{cols[col['sentence1']]}\t{cols[col['sentence2']]}\t{cols[col['gold_label']]}")
    for lang, rows in by_lang.items():
        with atomic_write(out_dir / f"test-{lang}.tsv") as fh:
            fh.write("\n".join(rows) + "\n")
    return sorted(by_lang)


def bucc_layout(extracted: Path, out_dir: Path) -> None:
    """Copy ``bucc2018/{pair}/{pair}.{split}.*`` files flat into ``out_dir`` (the loaders' layout)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for f in extracted.rglob("*"):
        if f.is_file() and f.parent.name.count("-") == 1:
            shutil.copyfile(f, out_dir / f.name)


def multinli() -> Resource:
    return Resource("multinli/multinli_1.0.zip", "https://cims.nyu.edu/~sbowman/multinli/multinli_1.0.zip",
                    revision="multinli_1.0")


def snli() -> Resource:
    return Resource("snli/snli_1.0.zip", "https://nlp.stanford.edu/projects/snli/snli_1.0.zip", revision="snli_1.0")


def multinli_train_to_tsv(path: Path, out: Path) -> int:
    """``multinli_1.0_train.txt`` or ``snli_1.0_train.txt`` (same layout: header with gold_label,
    sentence1, sentence2) -> XNLI-format TSV;
    pairs without a gold label ('-') are skipped, as in the XNLI baselines. A row without the three columns is
    skipped too and counted in a warning with its line (the files' other columns may hold anything; the release has
    none such, as far as its documentation says, so a count above zero means a changed file)."""
    lines = read_lines(path)
    col = _header(path, lines[0] if lines else "", ("gold_label", "sentence1", "sentence2"))
    gi, s1, s2 = col["gold_label"], col["sentence1"], col["sentence2"]
    rows, short = [], []
    for lineno, line in enumerate(lines[1:], start=2):
        cols = line.split("\t")
        if len(cols) <= max(gi, s1, s2):
            if line.strip():
                short.append(lineno)
            continue
        if cols[gi] in ("entailment", "neutral", "contradiction"):
            rows.append(f"{' '.join(cols[s1].split())}\t{' '.join(cols[s2].split())}\t{cols[gi]}")
    if short:
        log.warning("%s: %d rows without the gold_label, sentence1 and sentence2 columns skipped (lines %s)", path,
                    len(short), short[:5])
    with atomic_write(out) as fh:
        fh.write("\n".join(rows) + "\n")
    return len(rows)


def iter_opus_pairs(zip_path: Path, corpus: str, l1: str, l2: str = "en") -> Iterator[tuple[str, str]]:
    """Stream (l1, l2) pairs from an OPUS moses zip (languages in the file names are in alphabetical order) without
    loading it whole. Bytes that are not UTF-8 arrive as lone surrogates (``surrogateescape``) for the cleaner to
    count (:mod:`common.data.cleaning`); members of different lengths are an error naming the shorter one's end."""

    a, b = sorted((l1, l2))
    with zipfile.ZipFile(zip_path) as z:
        names = {Path(n).name: n for n in z.namelist()}
        try:
            members = [names[f"{corpus}.{a}-{b}.{side}"] for side in (a, b)]
        except KeyError as exc:
            raise ValueError(f"{zip_path}: missing member {exc}") from None
        fa, fb = (io.TextIOWrapper(z.open(m), encoding="utf-8", errors="surrogateescape", newline="\n")
                  for m in members)
        n = 0
        for n, (la, lb) in enumerate(itertools.zip_longest(fa, fb), start=1):
            if la is None or lb is None:
                short = members[0] if la is None else members[1]
                raise DataFormatError(f"{zip_path}:{short}", n, f"misaligned members: {short} ends at line {n - 1}, "
                                                               f"{members[1] if la is None else members[0]} goes on")
            la, lb = la.rstrip("\n").removesuffix("\r"), lb.rstrip("\n").removesuffix("\r")
            yield (la, lb) if a == l1 else (lb, la)


def opus_pairs(d: Downloader, corpora: list[list[str]], l1: str, l2: str, skipped: list[str],
               cleaner: PairCleaner | None = None) -> Iterator[tuple[str, str]]:
    """Stream the (l1, l2) pairs of each ``[corpus, version]`` OPUS release in turn, downloading each when the
    stream reaches it; a release without that language pair (HTTP 404) is skipped and named in ``skipped``. With a
    :class:`common.data.cleaning.PairCleaner`, each release's pairs pass through it (source
    ``corpus/version l1-l2``)."""
    for corpus, version in corpora:
        try:
            path = d.fetch(opus_moses(corpus, version, l1, l2))
        except urllib.error.HTTPError as exc:
            if exc.code != 404:
                raise
            skipped.append(f"{corpus}/{version} {l1}-{l2}")
            continue
        pairs = iter_opus_pairs(path, corpus, l1, l2)
        yield from cleaner.clean(pairs, f"{corpus}/{version} {l1}-{l2}") if cleaner else pairs

# --------------------------------------------------------------------------- question retrieval (VMSST 6.2)
def paq() -> Resource:
    """Probably Asked Questions (Lewis et al. 2021): 65M generated question-answer pairs, one JSON-lines file in
    NQ-open's format, ``{"question": ..., "answer": [...]}``."""
    return Resource("paq/PAQ.tar.gz", "https://dl.fbaipublicfiles.com/paq/v1/PAQ.tar.gz", revision="PAQ-v1")


def nq_test() -> Resource:
    """Natural Questions open-domain test set as distributed with DPR: ``question<TAB>["answer", ...]``."""
    return Resource("nq/nq-test.qa.csv", "https://dl.fbaipublicfiles.com/dpr/data/retriever/nq-test.qa.csv",
                    revision="DPR-nq-test")


MKQA_COMMIT = "651b8cc85c407270b024157aff06ee6ab8c4fc6d"


def mkqa() -> Resource:
    """MKQA (Longpre et al. 2021): 10k questions in 26 languages with answers, ``mkqa.jsonl.gz``."""
    return Resource("mkqa/mkqa.jsonl.gz",
                    f"https://github.com/apple/ml-mkqa/raw/{MKQA_COMMIT}/dataset/mkqa.jsonl.gz", revision=MKQA_COMMIT)


def paq_to_bank(jsonl: Path, out: Path) -> int:
    """PAQ's JSON lines -> the question bank of :mod:`common.eval.question_retrieval` (ids = line numbers)."""
    n = 0
    with atomic_write(out) as fh:
        for n, line in enumerate(iter_lines(jsonl), start=1):
            try:
                rec = json.loads(line)
                question, answers = rec["question"], rec["answer"]
            except (json.JSONDecodeError, KeyError, TypeError):
                question, answers = None, None
            if not isinstance(question, str) or not isinstance(answers, list) or not answers or not all(
                    isinstance(a, str) for a in answers):
                raise DataFormatError(jsonl, n, "expected {'question': str, 'answer': [str, ...]}")
            fh.write(json.dumps({"id": f"paq{n}", "question": question, "answers": answers},
                                ensure_ascii=False) + "\n")
    return n


def nq_to_queries(csv_path: Path, out: Path) -> int:
    """DPR's ``nq-test.qa.csv`` -> query file: tab-separated CSV rows ``question<TAB>['answer', ...]`` whose answer
    column is a Python list literal (DPR reads it with ``eval``; here :func:`ast.literal_eval`)."""
    rows = []
    # one row a line: DPR's file quotes no line break
    for lineno, row in enumerate(csv.reader(iter_lines(csv_path), delimiter="\t"), start=1):
        try:
            answers = ast.literal_eval(row[1]) if len(row) == 2 else None
        except (ValueError, SyntaxError):
            answers = None
        if not isinstance(answers, list) or not answers:
            raise DataFormatError(csv_path, lineno, "expected 'question<TAB>[answers]' (a Python list)")
        rows.append(json.dumps({"id": f"nq{lineno}", "question": row[0], "answers": [str(a) for a in answers]},
                               ensure_ascii=False))
    with atomic_write(out) as fh:
        fh.write("\n".join(rows) + "\n")
    return len(rows)


MKQA_NAMES = {"zh_cn": "zh"}  # MKQA's Simplified Chinese is Table 12's "zh"


def mkqa_to_queries(jsonl_gz: Path, out_dir: Path, languages: list[str]) -> dict[str, str]:
    """MKQA -> one query file per language (``languages``: MKQA's keys, e.g. ``zh_cn``; files and results are named
    as in Table 12, ``MKQA_NAMES``). Answers are MKQA's English answer texts and aliases (PAQ's answers are
    English); questions with no English text answer (unanswerable, or a bare number / date) are left out."""
    per: dict[str, list[str]] = {lang: [] for lang in languages}
    # iter_lines reads the gzip and names the line of bad UTF-8
    for lineno, line in enumerate(iter_lines(jsonl_gz), start=1):
        try:
            rec = json.loads(line)
            english = rec["answers"]["en"]
            queries = rec["queries"]
            example = rec["example_id"]
        except (json.JSONDecodeError, KeyError, TypeError):
            raise DataFormatError(jsonl_gz, lineno, "expected an MKQA record with 'example_id', 'queries' and "
                                  "'answers'") from None
        answers = [a["text"] for a in english if a.get("text")]
        answers += [alias for a in english for alias in a.get("aliases") or []]
        if not answers:
            continue
        for lang in languages:
            if queries.get(lang):
                per[lang].append(json.dumps({"id": f"mkqa{example}", "question": queries[lang],
                                             "answers": answers}, ensure_ascii=False))
    paths = {}
    for lang, rows in per.items():
        name = MKQA_NAMES.get(lang, lang)
        paths[name] = str(out_dir / f"mkqa.{name}.jsonl")
        with atomic_write(paths[name]) as fh:
            fh.write("\n".join(rows) + "\n")
    return paths
