"""The public sources of ``data_root`` in their original formats, rebuilt from a ``data_root`` (the shared one) for
a local mirror: what ``snakemake data`` would download from GitHub, laid out as ``<www>/<host>/<path>``.

Each derivation of ``common/data/sources.yaml`` gets what its source looks like: a copied file as it is, archive
members zipped or tarred beside a member nobody reads, manythings' Anki files with their third (attribution)
column (pol and tur without one, as their copies have), some stray white space and CRLF line ends, NTREX's English
source with CRLF line ends and one reference per language, the Bible corpus's CES XML (with an empty verse the rule
drops) and the KJV as one JSON file per book. Rebuilding ``data_root`` from it must give every file back byte for
byte."""
from __future__ import annotations

import gzip
import io
import json
import re
import tarfile
import urllib.parse
import zipfile
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from xml.sax.saxutils import escape

from common.data.rebuild import FileSpec, Folder, Source

NO_ATTRIBUTION = {"pol-eng.tsv.gz", "tur-eng.tsv.gz"}  # their source copies have two columns
UNREAD_MEMBER = "unread/README.txt"  # a member of every archive that no file is derived from


def mirror_path(www: Path, source: Source) -> Path:
    parts = urllib.parse.urlsplit(source.url)
    return www / parts.netloc / parts.path.lstrip("/")


def put(www: Path, source: Source, data: bytes) -> Path:
    path = mirror_path(www, source)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _lines(gz: bytes) -> list[str]:
    return gzip.decompress(gz).decode("utf-8").splitlines()


def anki_original(f: FileSpec, derived: bytes) -> bytes:
    """manythings' file: ``english<TAB>foreign<TAB>attribution`` (attribution where the copy has one), a stray
    space after some English sides and CRLF line ends in the zipped copies."""
    out = []
    for i, line in enumerate(_lines(derived)):
        en, xx = line.split("\t")
        en = en + " " if i % 50 == 0 else en
        if f.name not in NO_ATTRIBUTION:
            xx += f"\tCC-BY 2.0 (France) Attribution: tatoeba.org #{2 * i + 1} (a) & #{2 * i + 2} (b)"
        out.append(f"{en}\t{xx}")
    end = "\r\n" if f.member else "\n"
    return (end.join(out) + end).encode("utf-8")


def bible_xml(derived: bytes, code: str) -> tuple[bytes, dict[str, str]]:
    """The corpus's CES XML of one language (book and chapter divs, one seg per verse, an empty verse the rule
    drops) and the English verses the file pairs with it."""
    english: dict[str, str] = {}
    body, book, chapter = [], None, None
    for line in _lines(derived):
        sid, en, xx = line.split("\t")
        english[sid] = en
        b, c = sid.split(".")[1], ".".join(sid.split(".")[:3])
        if c != chapter:
            body += ["</div>"] if chapter else []
            if b != book:
                body += (["</div>"] if book else []) + [f'<div id="b.{b}" type="book">']
                book = b
            body.append(f'<div id="{c}" type="chapter">')
            chapter = c
        body.append(f'<seg id="{sid}" type="verse">\n\t\t{escape(xx)}\n\t</seg>')
    body.append(f'<seg id="{chapter}.999" type="verse">\n\t</seg>')  # empty: dropped
    body += ["</div>", "</div>"]
    xml = (f'<?xml version="1.0" ?>\n<cesDoc version="4">\n<cesHeader version="2"><language iso639="{code}"/>'
           f'</cesHeader>\n<text>\n<body id="Bible">\n' + "\n".join(body) + "\n</body>\n</text>\n</cesDoc>\n")
    return xml.encode("utf-8"), english


def kjv_book(name: str, code: str, english: dict[str, str]) -> bytes:
    """aruljohn/Bible-kjv's layout of one book: chapters, each a list of ``{"verse", "text"}``."""
    chapters: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for sid, text in english.items():
        _, b, c, v = sid.split(".")
        if b == code:
            chapters[int(c)].append((int(v), text))
    data = {"book": name.removesuffix(".json"),
            "chapters": [{"chapter": str(c), "verses": [{"verse": str(v), "text": t} for v, t in sorted(verses)]}
                         for c, verses in sorted(chapters.items())]}
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


def archive(path: str, members: dict[str, bytes]) -> bytes:
    members = {**members, UNREAD_MEMBER: b"not part of data_root\n"}
    buf = io.BytesIO()
    if path.endswith(".zip"):
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
            for name, data in members.items():
                z.writestr(name, data)
    else:
        with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as t:
            for name, data in members.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def build(data_root: Path, www: Path, folders: Iterable[Folder]) -> None:
    """Serve under ``www`` the sources every file of ``folders`` is derived from, made from ``data_root``."""
    archives: dict[Source, dict[str, bytes]] = defaultdict(dict)
    for folder in folders:
        english: dict[str, str] = {}
        for f in folder.files:
            derived = (data_root / folder.name / f.name).read_bytes()
            if f.derive == "copy":
                put(www, f.source, derived)
            elif f.derive == "archive":
                archives[f.source][str(f.member)] = derived
            elif f.derive == "anki":
                original = anki_original(f, derived)
                if f.member:
                    archives[f.source][f.member] = original
                    archives[f.source][re.sub(r"[^/]*$", "_about.txt", f.member)] = b"manythings.org/anki\n"
                else:
                    put(www, f.source, original)
            elif f.derive == "ntrex":
                assert f.english is not None
                rows = [line.split("\t") for line in _lines(derived)]
                put(www, f.english, "".join(f"{en}\r\n" for en, _ in rows).encode("utf-8"))
                put(www, f.source, "".join(f"{xx}\n" for _, xx in rows).encode("utf-8"))
            elif f.derive == "bible":
                xml, verses = bible_xml(derived, f.name.split("-")[0])
                put(www, f.source, xml)
                english.update(verses)
        for code, book in folder.english_books.items():
            put(www, book, kjv_book(book.path, code, english))
    for source, members in archives.items():
        put(www, source, archive(source.path, members))
