"""``snakemake data``: data_root rebuilt from its public sources (common/data/rebuild.py, common/data/sources.yaml).

The sources are served by a local HTTP server in their original formats, made from the shared data_root by
``tests/common/data/originals.py`` (Anki pairs zipped with their attribution column, NTREX's English source and
references, the Bible corpus's XML and the KJV's JSON books, the STS archives); every derived file must come back
byte for byte, with the sha256 its shared MANIFEST.md lists. A corrupted source, a truncated download and a wrong
pin each stop with one error naming the file, both digests (where there is a whole file to digest) and the source.
"""
import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from common.config import load_yaml
from common.data import rebuild as rb
from common.data import staged_pairs
from common.data.mirror_server import MirrorServer
from common.io import sha256_file
from tests.conftest import DATA_ROOT, ROOT

from . import originals

needs_data = pytest.mark.skipif(not (DATA_ROOT / "INDEX.md").exists(), reason="shared data not found")
FOLDERS = rb.load_sources()


def one_file(folder: str, name: str) -> rb.Folder:
    """``folder`` of the sources file with only its file ``name``."""
    f = FOLDERS[folder]
    return dataclasses.replace(f, files=tuple(s for s in f.files if s.name == name))


def build(tmp_path: Path, folder: rb.Folder, url: str) -> rb.FolderBuild:
    return rb.FolderBuild(tmp_path / "data", folder, tmp_path / "downloads", url, retries=2, retry_wait=0.01)


def test_the_sources_file_pins_what_the_shared_manifests_list():
    """Every file of every shared folder is in the sources file with the digest its MANIFEST.md lists, the folder
    names are read right without parsing the file, and the Tatoeba pins of the paper-scale downloads agree."""
    assert rb.folder_names() == list(FOLDERS)
    tatoeba = load_yaml(ROOT / "common/data/tatoeba_v1_all.sha256.yaml")
    pins = {f.name: f.sha256 for f in FOLDERS["tatoeba_v1"].files}
    assert all(pins[f"tatoeba.{lang}-eng.{lang}"] == d["src"] and pins[f"tatoeba.{lang}-eng.eng"] == d["eng"]
               for lang, d in tatoeba.items())
    if not (DATA_ROOT / "INDEX.md").exists():
        return
    for name, folder in FOLDERS.items():
        listed = staged_pairs.manifest_checksums(DATA_ROOT / name)
        assert {f.name: f.sha256 for f in folder.files} == listed, name


@needs_data
def test_snakemake_data_rebuilds_every_folder_byte_for_byte(tmp_path):
    """The data rule against the originals: every derived file byte-identical to the shared data_root, each folder
    with a MANIFEST.md the staged-pairs reader accepts, INDEX.md last; a second run has nothing to do."""
    www = tmp_path / "www"
    started = time.time()
    originals.build(DATA_ROOT, www, FOLDERS.values())
    data = tmp_path / "data"
    cmd = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(tmp_path / "work"), "data",
           "--cores", "2"]
    with MirrorServer(www) as server:
        config = ["--config", f"data_root={data}", f"cache_root={tmp_path / 'cache'}",
                  f"download_base_url={server.url}"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}  # the jobs import this checkout's modules
        proc = subprocess.run([*cmd, *config], capture_output=True, text=True, timeout=900, env=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        again = subprocess.run([*cmd, "-n", *config], capture_output=True, text=True, timeout=300, env=env)
    assert "Nothing to be done" in again.stdout + again.stderr
    for name, folder in FOLDERS.items():
        listed = staged_pairs.manifest_checksums(DATA_ROOT / name)
        for f in folder.files:
            assert sha256_file(data / name / f.name) == listed[f.name], f"{name}/{f.name}"
            assert (data / name / f.name).read_bytes() == (DATA_ROOT / name / f.name).read_bytes()
        assert staged_pairs.manifest_checksums(data / name) == listed
    assert staged_pairs.read_source(data / "anki_pairs", "hin")[0] == \
        staged_pairs.read_source(DATA_ROOT / "anki_pairs", "hin")[0]
    assert all(f"| {name}/ |" in (data / "INDEX.md").read_text() for name in FOLDERS)
    print(f"rebuilt {sum(len(f.files) for f in FOLDERS.values())} files in {time.time() - started:.0f} s")


@needs_data
def test_a_corrupted_source_names_the_file_both_digests_and_the_source(tmp_path):
    folder = one_file("anki_pairs", "hin-eng.tsv.gz")
    originals.build(DATA_ROOT, tmp_path / "www", [folder])
    source = originals.mirror_path(tmp_path / "www", folder.files[0].source)
    source.write_bytes(source.read_bytes().replace(b"Wow!", b"Wow?", 1))  # one changed character
    with MirrorServer(tmp_path / "www") as server, pytest.raises(rb.RebuildError) as err:
        build(tmp_path, folder, server.url).run()
    msg, pinned = str(err.value), folder.files[0].sha256
    assert msg.startswith("anki_pairs/hin-eng.tsv.gz: sha256 ") and f"does not match the pinned {pinned}" in msg
    assert len([w for w in msg.split() if len(w) == 64]) == 2  # both digests
    assert "Quantumgoku/TranslationModel1/blob/c0fcaf299b9d52cdd7fac2278da8bd13fc049036/hin-eng/hin.txt" in msg
    assert not (tmp_path / "data" / "anki_pairs").exists() or not any((tmp_path / "data" / "anki_pairs").iterdir())
    assert not any(p.is_file() and p.name == "hin.txt" for p in (tmp_path / "downloads").rglob("*"))  # refetched next


@needs_data
def test_a_truncated_download_is_an_error_naming_the_file_and_the_source(tmp_path):
    """A host that serves half of a file as if whole: the digest check names both digests; one that drops every
    connection halfway: the download fails after its retries, naming the file and the URL."""
    folder = one_file("iwslt14_deen_test", "test.de")
    originals.build(DATA_ROOT, tmp_path / "www", [folder])
    served = originals.mirror_path(tmp_path / "www", folder.files[0].source)
    whole = served.read_bytes()
    served.write_bytes(whole[: len(whole) // 2])
    with MirrorServer(tmp_path / "www") as server, pytest.raises(rb.RebuildError) as err:
        build(tmp_path, folder, server.url).run()
    msg = str(err.value)
    assert msg.startswith("iwslt14_deen_test/test.de: sha256 ") and folder.files[0].sha256 in msg
    assert len([w for w in msg.split() if len(w) == 64]) == 2
    assert "mt-upc/transformer-contributions-nmt/blob/b3599ce82fb06fcfb26e45555c31c2e42247af01/data/iwslt14/test.de" \
        in msg
    assert not (tmp_path / "data" / "iwslt14_deen_test" / "test.de").exists()

    served.write_bytes(whole)
    path = "/" + served.relative_to(tmp_path / "www").as_posix()
    with MirrorServer(tmp_path / "www", faults={path: "truncated"}) as server, pytest.raises(rb.RebuildError) as err:
        build(tmp_path, folder, server.url).run()
    assert str(err.value).startswith(f"iwslt14_deen_test/test.de: downloading {server.url}{path} failed: ")
    assert "IncompleteRead" in str(err.value)
    assert not (tmp_path / "data" / "iwslt14_deen_test" / "test.de").exists()
    with MirrorServer(tmp_path / "www") as server:  # the host recovers: the rerun resumes and finishes
        build(tmp_path, folder, server.url).run()
    assert sha256_file(tmp_path / "data" / "iwslt14_deen_test" / "test.de") == folder.files[0].sha256


@needs_data
def test_a_wrong_pin_names_the_file_both_digests_and_the_source(tmp_path):
    """A pin that is not the derived file's digest (an edited sources file): one error, nothing written."""
    text = (ROOT / "common/data/sources.yaml").read_text()
    right = next(f.sha256 for f in FOLDERS["bible_corpus"].files if f.name == "gla-eng.tsv.gz")
    sources = tmp_path / "sources.yaml"
    sources.write_text(text.replace(right, "f" * 64))
    folder = dataclasses.replace(rb.load_sources(sources)["bible_corpus"])
    folder = dataclasses.replace(folder, files=tuple(f for f in folder.files if f.name == "gla-eng.tsv.gz"))
    originals.build(DATA_ROOT, tmp_path / "www", [one_file("bible_corpus", "gla-eng.tsv.gz")])
    with MirrorServer(tmp_path / "www") as server, pytest.raises(rb.RebuildError) as err:
        build(tmp_path, folder, server.url).run()
    msg = str(err.value)
    assert msg.startswith(f"bible_corpus/gla-eng.tsv.gz: sha256 {right} of the derived file does not match the "
                          f"pinned {'f' * 64}")
    assert "christos-c/bible-corpus/blob/44e5fca1bfb369a5da2ee23ebc6f421c88489c5c/bibles/Gaelic-PART.xml" in msg
    assert not (tmp_path / "data" / "bible_corpus" / "gla-eng.tsv.gz").exists()
    assert not (tmp_path / "data" / "bible_corpus" / "MANIFEST.md").exists()


def test_a_sources_entry_without_a_pin_or_a_path_is_refused(tmp_path):
    bad = tmp_path / "sources.yaml"
    bad.write_text("folders:\n  x:\n    title: t\n    license: l\n    derivation: d\n    repository: https://github.com/a/b\n"
                   "    commit: c\n    files:\n      f.txt: nothex\n")
    with pytest.raises(ValueError, match=r"folders/x/files/f.txt: sha256 must be 64 lower-case hex digits"):
        rb.load_sources(bad)
    bad.write_text(bad.read_text().replace("nothex", "a" * 64))
    with pytest.raises(ValueError, match=r"folders/x/files/f.txt: no path"):
        rb.load_sources(bad)
    bad.write_text(bad.read_text().replace(f"f.txt: {'a' * 64}", f"f.txt: {{sha256: {'a' * 64}, pth: y}}"))
    with pytest.raises(ValueError, match=r"folders/x/files/f.txt: unknown keys \['pth'\]"):
        rb.load_sources(bad)


def test_derivations_by_hand():
    """The three conversions on a few lines worked out by hand."""
    anki = "Hi. \tSalut.\tCC-BY #1\r\n\nGo.\t\tCC\nRun!\tCours !\n"
    assert rb.anki_pairs(anki, "x") == "Hi.\tSalut.\nRun!\tCours !\n"
    with pytest.raises(rb.RebuildError, match=r"^x:2: expected english<TAB>foreign"):
        rb.anki_pairs("a\tb\nonly one column\n", "x")
    assert rb.ntrex_pairs("One.\r\nTwo\tparts\r\n", " Eins.\nZwei\n", ("en", "de")) == "One.\tEins.\nTwo parts\tZwei\n"
    with pytest.raises(rb.RebuildError, match=r"^de: 1 lines, but the English source en has 2"):
        rb.ntrex_pairs("a\nb\n", "x\n", ("en", "de"))
    xml = (b'<cesDoc><text><body><div id="b.MAT" type="book"><seg id="b.MAT.1.1" type="verse">\n  Am <i>Anfang</i>\n'
           b'</seg><seg id="b.MAT.1.1" type="verse">again</seg><seg id="b.MAT.1.2" type="verse"> </seg>'
           b'<seg id="b.MAT.1.3" type="verse">no KJV</seg></div></body></text></cesDoc>')
    kjv = rb.kjv_verses(b'{"chapters": [{"chapter": "1", "verses": [{"verse": "1", "text": "In the  beginning"},'
                        b' {"verse": "2", "text": "And"}]}]}', "MAT", "kjv")
    assert rb.bible_pairs(xml, kjv, "x") == "b.MAT.1.1\tIn the beginning\tAm Anfang\n"
    assert rb.gzip_text("a\n")[:10] == bytes.fromhex("1f8b08000000000002ff")  # no name, mtime 0, OS unknown
