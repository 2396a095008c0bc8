"""Rebuild ``data_root`` from its public sources: ``snakemake data --config data_root=DIR`` (one job per folder).

What every folder holds, where each file comes from and how it is derived is ``common/data/sources.yaml`` (the
provenance each folder's ``MANIFEST.md`` gives: repository, commit, path, license, derivation, and the sha256 of
every file as it lands in ``data_root``). A folder's job

1. downloads each source through :class:`common.data.download.Downloader` (resume, retry; a file copied byte for
   byte is pinned by its own digest, any other download by the commit in its URL, its digest recorded on first
   download), from GitHub's raw file host or a mirror (``--base-url``, the tests' local server);
2. derives each file as the sources file says (a copy, an archive member, or one of three conversions to
   ``<iso3>-eng.tsv.gz``: manythings' Anki pairs, NTREX-128, the Bible corpus) and writes it gzipped
   reproducibly (level 9, mtime 0, no file name: the same bytes on every machine);
3. checks every file's sha256 against its pin before it is renamed into place: a mismatch stops the job with one
   error naming the file, both digests and the source, leaves nothing of the file behind and drops the cached
   source, so the next run downloads it afresh;
4. writes the folder's ``MANIFEST.md`` last, so a folder with a manifest is whole. ``--index`` writes
   ``INDEX.md``, the list of folders (``--all``: every folder, then the index, in one process).

A file already in place with its pinned digest is kept (a rerun downloads nothing it has).
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import http.client
import io
import json
import logging
import re
import tarfile
import urllib.error
import xml.etree.ElementTree as ET
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common.data import download as dl
from common.io import atomic_write, sha256_file

log = logging.getLogger(__name__)
SOURCES = Path(__file__).with_name("sources.yaml")
RAW_HOST = "https://raw.githubusercontent.com"
DERIVATIONS = ("copy", "archive", "anki", "ntrex", "bible")
FOLDER_KEYS = {"title", "license", "derivation", "notes", "repository", "commit", "path", "derive", "archive",
               "member_prefix", "english", "files"}
FILE_KEYS = {"sha256", "derive", "repository", "commit", "path", "archive", "member", "blob"}  # blob: provenance
REBUILD_COMMAND = "snakemake data --cores 2 --config data_root={data_root}"
_FIELD_BREAKS = re.compile(r"[\t\r\n]")
# a transfer that failed after the downloader's retries (it resumes from the bytes received when run again)
_DOWNLOAD_ERRORS = (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError)


class RebuildError(RuntimeError):
    """A source that could not be downloaded or read, or a derived file whose digest is not its pin."""


@dataclass(frozen=True)
class Source:
    """One file of a public repository at a commit."""

    repository: str  # https://github.com/<owner>/<repo>
    commit: str
    path: str

    @property
    def url(self) -> str:
        return f"{RAW_HOST}/{self.repository.removeprefix('https://github.com/')}/{self.commit}/{self.path}"

    @property
    def page(self) -> str:
        """Where a reader sees the file on GitHub."""
        return f"{self.repository}/blob/{self.commit}/{self.path}"

    def resource(self, sha256: str | None = None) -> dl.Resource:
        name = f"{self.repository.removeprefix('https://github.com/')}/{self.commit}/{self.path}"
        return dl.Resource(name, self.url, sha256=sha256, revision=None if sha256 else self.commit)


@dataclass(frozen=True)
class FileSpec:
    """One file of a folder: its pin and how it is made."""

    folder: str
    name: str
    sha256: str
    derive: str
    source: Source  # the file, archive, reference or XML the derivation reads
    member: str | None = None  # an archive's member (derive archive, or anki from a zip)
    english: Source | None = None  # ntrex: the English source file

    def describe(self) -> str:
        """The source as a reader finds it (GitHub pages; an archive member after '->')."""
        text = self.source.page + (f" -> {self.member}" if self.member else "")
        if self.english is not None:
            text += f" + {self.english.page}"
        return text


@dataclass(frozen=True)
class Folder:
    name: str
    title: str
    license: str
    derivation: str
    notes: tuple[str, ...]
    files: tuple[FileSpec, ...]
    english_books: dict[str, Source] = field(default_factory=dict)  # bible: book code -> its KJV JSON

    def sources_text(self) -> str:
        """The folder's repositories and commits, for its manifest."""
        seen = dict.fromkeys(f"{f.source.repository} at commit {f.source.commit}" for f in self.files)
        seen.update(dict.fromkeys(f"{s.repository} at commit {s.commit}" for s in self.english_books.values()))
        return "; ".join(seen)


def load_sources(path: str | Path = SOURCES) -> dict[str, Folder]:
    """Every folder of the sources file (a path names the file and the key of an entry it rejects)."""
    from common.config import load_yaml

    raw = load_yaml(path)
    folders = {}
    for name, f in raw["folders"].items():
        where = f"{path}: folders/{name}"
        try:
            folders[name] = _folder(name, f, where)
        except KeyError as exc:
            raise ValueError(f"{where}: missing key {exc}") from None
    return folders


def _folder(name: str, f: dict[str, Any], where: str) -> Folder:
    if unknown := sorted(set(f) - FOLDER_KEYS):
        raise ValueError(f"{where}: unknown keys {unknown}; expected some of {sorted(FOLDER_KEYS)}")
    english = f.get("english")  # ntrex: the English source's path; bible: the KJV's repository, commit and books
    books = {code: Source(english["repository"], english["commit"], file)
             for code, file in english.get("books", {}).items()} if isinstance(english, dict) else {}
    files = []
    for fname, entry in f["files"].items():
        spec = {"sha256": entry} if isinstance(entry, str) else dict(entry)
        if unknown := sorted(set(spec) - FILE_KEYS):
            raise ValueError(f"{where}/files/{fname}: unknown keys {unknown}; expected some of {sorted(FILE_KEYS)}")
        derive = spec.get("derive", f.get("derive", "copy"))
        if derive not in DERIVATIONS:
            raise ValueError(f"{where}/files/{fname}: unknown derive {derive!r}; expected one of {DERIVATIONS}")
        if not re.fullmatch(r"[0-9a-f]{64}", str(spec["sha256"])):
            raise ValueError(f"{where}/files/{fname}: sha256 must be 64 lower-case hex digits")
        repo, commit = spec.get("repository", f.get("repository")), spec.get("commit", f.get("commit"))
        if not repo or not commit:
            raise ValueError(f"{where}/files/{fname}: no repository and commit (neither the file's nor the folder's)")
        member = None
        if derive == "archive" or "archive" in spec:
            path = spec.get("archive", f.get("archive"))
            member = spec.get("member", f.get("member_prefix", "") + fname)
        else:
            path = spec.get("path", f"{f['path']}/{fname}" if "path" in f else None)
        if not path:
            raise ValueError(f"{where}/files/{fname}: no path (neither the file's nor the folder's)")
        eng = Source(repo, commit, f["english"]) if derive == "ntrex" else None
        if derive == "bible" and not books:
            raise ValueError(f"{where}: derive bible needs english.books")
        files.append(FileSpec(name, fname, spec["sha256"], derive, Source(repo, commit, path), member, eng))
    return Folder(name, " ".join(f["title"].split()), " ".join(f["license"].split()),
                  " ".join(f["derivation"].split()), tuple(" ".join(n.split()) for n in f.get("notes", [])),
                  tuple(files), books)


# --------------------------------------------------------------------------- derivations
def gzip_text(text: str) -> bytes:
    """``text`` as UTF-8, gzipped reproducibly: level 9, mtime 0, no file name (Python's GzipFile header)."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=buf, mtime=0) as gz:
        gz.write(text.encode("utf-8"))
    return buf.getvalue()


def _field(text: str) -> str:
    """A tab, CR or LF inside a field becomes a space; white space around it goes."""
    return _FIELD_BREAKS.sub(" ", text).strip()


def _text(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise RebuildError(f"{where}:{line}: not UTF-8 ({exc.reason})") from None


def _lines(text: str) -> list[str]:
    """The lines of a text file (a final newline ends the last line, it does not start another)."""
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def anki_pairs(text: str, where: str) -> str:
    """manythings' ``english<TAB>foreign[<TAB>attribution]`` lines -> ``english<TAB>foreign`` lines: the attribution
    dropped, each field cleaned (:func:`_field`), a pair with an empty side dropped; order and duplicates kept."""
    out = []
    for lineno, line in enumerate(_lines(text), start=1):
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) < 2:
            raise RebuildError(f"{where}:{lineno}: expected english<TAB>foreign[<TAB>attribution], found one column")
        en, xx = _field(cols[0]), _field(cols[1])
        if en and xx:
            out.append(f"{en}\t{xx}\n")
    return "".join(out)


def ntrex_pairs(english: str, reference: str, where: tuple[str, str]) -> str:
    """Line i of the English source beside line i of the reference (equal line counts), fields cleaned, a pair
    with an empty side dropped."""
    en, xx = _lines(english), _lines(reference)
    if len(en) != len(xx):
        raise RebuildError(f"{where[1]}: {len(xx)} lines, but the English source {where[0]} has {len(en)}")
    return "".join(f"{_field(a)}\t{_field(b)}\n" for a, b in zip(en, xx) if _field(a) and _field(b))


def kjv_verses(book: bytes, code: str, where: str) -> dict[str, str]:
    """aruljohn/Bible-kjv's ``{"chapters": [{"chapter": "1", "verses": [{"verse": "1", "text": ...}]}]}`` ->
    ``b.<CODE>.<chapter>.<verse>`` -> the text, white space collapsed."""
    try:
        data = json.loads(_text(book, where))
        return {f"b.{code}.{ch['chapter']}.{v['verse']}": " ".join(v["text"].split())
                for ch in data["chapters"] for v in ch["verses"]}
    except json.JSONDecodeError as exc:
        raise RebuildError(f"{where}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    except (KeyError, TypeError) as exc:
        raise RebuildError(f"{where}: expected chapters[].verses[] with 'verse' and 'text' ({exc!r})") from None


def bible_pairs(xml: bytes, kjv: dict[str, str], where: str) -> str:
    """``seg_id<TAB>english<TAB>foreign`` for every verse of the corpus XML (in file order, an id's first
    occurrence) that has a KJV verse, both sides non-empty after white space is collapsed."""
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise RebuildError(f"{where}:{exc.position[0]}: not well-formed XML ({exc})") from None
    verses: dict[str, str] = {}
    for seg in root.iter("seg"):
        if seg.get("type") == "verse" and (sid := seg.get("id")) and sid not in verses:
            verses[sid] = " ".join("".join(seg.itertext()).split())
    return "".join(f"{sid}\t{kjv[sid]}\t{xx}\n" for sid, xx in verses.items() if xx and kjv.get(sid))


# --------------------------------------------------------------------------- one folder
class FolderBuild:
    """Build one folder of ``data_root``: its sources are cached in ``downloads/<folder>/`` (one downloader per
    folder, so parallel jobs never share a lock file)."""

    def __init__(self, data_root: Path, folder: Folder, downloads: Path, base_url: str | None = None,
                 retries: int = 3, retry_wait: float = 1.0):
        self.out = Path(data_root) / folder.name
        self.folder = folder
        self.cache = dl.Downloader(Path(downloads) / folder.name, base_url=base_url, retries=retries,
                                   retry_wait=retry_wait)
        self.copies = dl.Downloader(self.out, base_url=base_url, retries=retries, retry_wait=retry_wait)
        self.base_url = base_url
        self._kjv: dict[str, str] | None = None

    def run(self) -> list[Path]:
        written = [self.file(f) for f in self.folder.files]
        write_manifest(self.out, self.folder)
        return written

    def file(self, f: FileSpec) -> Path:
        target = self.out / f.name
        if target.exists() and sha256_file(target) == f.sha256:
            return target
        if f.derive == "copy":
            return self._copy(f)
        used: list[dl.Resource] = []
        data = self._derive(f, used)
        digest = hashlib.sha256(data).hexdigest()
        if digest != f.sha256:
            for res in used:
                self.cache.forget(res.name)
            raise RebuildError(f"{self.folder.name}/{f.name}: sha256 {digest} of the derived file does not match the "
                               f"pinned {f.sha256} (source: {f.describe()}, derived by '{f.derive}'); the downloaded "
                               "source was removed, so the next run downloads it afresh")
        with atomic_write(target, "wb") as fh:
            fh.write(data)
        log.info("%s/%s: derived (%s), sha256 checked", self.folder.name, f.name, f.derive)
        return target

    def _copy(self, f: FileSpec) -> Path:
        """Download the file straight into place (``<name>.part`` until whole and checked)."""
        res = dl.Resource(f.name, f.source.url, sha256=f.sha256)
        try:
            return self.copies.fetch(res)
        except dl.ChecksumError as exc:
            raise RebuildError(f"{self.folder.name}/{f.name}: sha256 {exc.got} of the downloaded file does not match "
                               f"the pinned {f.sha256} (source: {f.describe()}, fetched from {exc.url}; "
                               "fetched twice, the second time from its first byte)") from None
        except _DOWNLOAD_ERRORS as exc:
            raise RebuildError(f"{self.folder.name}/{f.name}: downloading {self._url(f.source)} failed: {exc!r} "
                               "(a rerun resumes from the bytes received)") from None

    def _url(self, source: Source) -> str:
        return dl._rebase(source.url, self.base_url)

    def _fetch(self, f: FileSpec, source: Source, used: list[dl.Resource]) -> bytes:
        res = source.resource()
        used.append(res)
        try:
            return self.cache.fetch(res).read_bytes()
        except dl.ChecksumError as exc:
            self.cache.forget(res.name)
            raise RebuildError(f"{self.folder.name}/{f.name}: its source {source.page} changed: sha256 {exc.got} "
                               f"now, {exc.expected} when first downloaded (fetched from {exc.url}); the recorded "
                               "digest was dropped, so the next run takes the source as it is now") from None
        except _DOWNLOAD_ERRORS as exc:
            raise RebuildError(f"{self.folder.name}/{f.name}: downloading {self._url(source)} failed: {exc!r} "
                               "(a rerun resumes from the bytes received)") from None

    def _member(self, f: FileSpec, used: list[dl.Resource]) -> bytes:
        archive = self._fetch(f, f.source, used)
        where = f"{f.source.page} -> {f.member}"
        try:
            if f.source.path.endswith(".zip"):
                with zipfile.ZipFile(io.BytesIO(archive)) as z:
                    return z.read(str(f.member))
            with tarfile.open(fileobj=io.BytesIO(archive)) as t:
                member = t.extractfile(str(f.member))
                if member is None:
                    raise KeyError(f.member)
                return member.read()
        except KeyError:
            raise RebuildError(f"{self.folder.name}/{f.name}: {f.source.page} has no member {f.member!r}") from None
        except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, zlib.error) as exc:
            for res in used:
                self.cache.forget(res.name)
            raise RebuildError(f"{self.folder.name}/{f.name}: cannot read {where} ({exc!r}); the downloaded archive "
                               "was removed, so the next run downloads it afresh") from None

    def _derive(self, f: FileSpec, used: list[dl.Resource]) -> bytes:
        name = f"{self.folder.name}/{f.name}"
        if f.derive == "archive":
            return self._member(f, used)
        if f.derive == "anki":
            data = self._member(f, used) if f.member else self._fetch(f, f.source, used)
            return gzip_text(anki_pairs(_text(data, f.describe()), f.describe()))
        if f.derive == "ntrex":
            assert f.english is not None
            english = _text(self._fetch(f, f.english, used), f.english.page)
            reference = _text(self._fetch(f, f.source, used), f.source.page)
            return gzip_text(ntrex_pairs(english, reference, (f.english.page, f.source.page)))
        if f.derive == "bible":
            return gzip_text(bible_pairs(self._fetch(f, f.source, used), self._english(f, used), f.source.page))
        raise RebuildError(f"{name}: unknown derivation {f.derive!r}")

    def _english(self, f: FileSpec, used: list[dl.Resource]) -> dict[str, str]:
        """Every KJV verse of the folder's books (read once per folder)."""
        if self._kjv is None:
            kjv: dict[str, str] = {}
            for code, book in self.folder.english_books.items():
                kjv.update(kjv_verses(self._fetch(f, book, used), code, book.page))
            self._kjv = kjv
        return self._kjv


# --------------------------------------------------------------------------- manifests
def write_manifest(out: Path, folder: Folder) -> Path:
    """The folder's ``MANIFEST.md``: its provenance and every file with its bytes, sha256 and source (the table
    :func:`common.data.staged_pairs.manifest_checksums` reads)."""
    lines = [f"# {folder.title}", "",
             "Rebuilt from its public sources by `snakemake data` (common/data/rebuild.py, common/data/sources.yaml); "
             "every file below was checked against its pinned sha256.", "",
             f"- Source: {folder.sources_text()}",
             f"- License: {folder.license}",
             f"- Derivation: {folder.derivation}"]
    lines += [f"- Note: {note}" for note in folder.notes]
    lines += ["", "| file | bytes | sha256 | source |", "|---|---|---|---|"]
    lines += [f"| {f.name} | {(out / f.name).stat().st_size} | {f.sha256} | {f.describe()} |" for f in folder.files]
    with atomic_write(out / "MANIFEST.md") as fh:
        fh.write("\n".join(lines) + "\n")
    return out / "MANIFEST.md"


def write_index(data_root: Path, folders: dict[str, Folder]) -> Path:
    """``INDEX.md``: every folder, what it is, its files and license."""
    lines = ["# data_root index", "",
             "Every folder was rebuilt from its public sources by `snakemake data` (common/data/rebuild.py); each "
             "folder's MANIFEST.md gives its sources, license, derivation and every file's sha256.", "",
             "| folder | what | files | license |", "|---|---|---|---|"]
    lines += [f"| {name}/ | {f.title} | {len(f.files)} | {f.license} |" for name, f in folders.items()]
    with atomic_write(Path(data_root) / "INDEX.md") as fh:
        fh.write("\n".join(lines) + "\n")
    return Path(data_root) / "INDEX.md"


def folder_names(sources: str | Path = SOURCES) -> list[str]:
    """The folders of the sources file, read without parsing it (the workflow reads them on every invocation;
    parsing the whole file would take a fifth of a second each time)."""
    names, inside = [], False
    for line in Path(sources).read_text(encoding="utf-8").splitlines():
        if line.startswith("folders:"):
            inside = True
        elif inside and (m := re.fullmatch(r"  ([\w./-]+):\s*", line)):
            names.append(m.group(1))
    return names


def rebuild(data_root: str | Path, downloads: str | Path, folders: list[str], base_url: str | None = None,
            sources: str | Path = SOURCES) -> list[Path]:
    """Build ``folders`` of the sources file under ``data_root``, one after the other."""
    known = load_sources(sources)
    unknown = sorted(set(folders) - set(known))
    if unknown:
        raise ValueError(f"unknown data folders {unknown}; {sources} has {sorted(known)}")
    written: list[Path] = []
    for name in folders:
        written += FolderBuild(Path(data_root), known[name], Path(downloads), base_url).run()
    return written


def index(data_root: str | Path, sources: str | Path = SOURCES) -> Path:
    """``INDEX.md`` of ``data_root``, once every folder of the sources file has its manifest."""
    known = load_sources(sources)
    missing = [n for n in known if not (Path(data_root) / n / "MANIFEST.md").exists()]
    if missing:
        raise RebuildError(f"{data_root}: no MANIFEST.md in {missing} yet: build them first")
    return write_index(Path(data_root), known)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m common.data.rebuild", description=__doc__.splitlines()[0])
    p.add_argument("--data-root", required=True)
    p.add_argument("--downloads", required=True, help="where the sources are cached (one folder per data folder)")
    p.add_argument("--folder", action="append", default=[], help="build this folder (repeatable)")
    p.add_argument("--all", action="store_true", help="build every folder, then INDEX.md")
    p.add_argument("--index", action="store_true", help="write INDEX.md (every folder must have its manifest)")
    p.add_argument("--base-url", default=None, help="a mirror replacing the scheme and host of every source URL")
    p.add_argument("--sources", default=str(SOURCES))
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        rebuild(a.data_root, a.downloads, folder_names(a.sources) if a.all else a.folder, a.base_url, a.sources)
        if a.index or a.all:
            index(a.data_root, a.sources)
    except RebuildError as exc:
        raise SystemExit(f"rebuild failed: {exc}") from None


if __name__ == "__main__":
    main()
