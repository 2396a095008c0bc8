"""Preflight: what a paper-scale submission would miss, found before it is submitted."""
import json
from types import SimpleNamespace

import pytest

from common.data.mirror_server import MirrorServer
from common.rehearsal.mirror import Listing, populate
from common.workflow import preflight as pf
from tests.conftest import DATA_ROOT

needs_data = pytest.mark.skipif(not (DATA_ROOT / "INDEX.md").exists(), reason="shared data not found")


def test_head_answers_sizes_retries_a_503_and_names_a_404(tmp_path):
    f = tmp_path / "www" / "example.org" / "a.bin"
    f.parent.mkdir(parents=True)
    f.write_bytes(b"x" * 1234)
    with MirrorServer(tmp_path / "www", {"/example.org/a.bin": "503"}) as s:
        assert pf._head(f"{s.url}/example.org/a.bin", 5) == (f"{s.url}/example.org/a.bin", 1234, None)
        assert s.fired  # the 503 was answered once, then asked again
        assert pf._head(f"{s.url}/example.org/b.bin", 5)[2] == "HTTP 404"


@needs_data
def test_the_paper_download_list_is_the_corpus_preps():
    """The listing enumerates the paper config's downloads, not the rehearsal's cut: all of DAP's Tatoeba
    languages and OPUS corpora, the pinned checkpoints' files, and HICTL's hand-placed archives."""
    paper, rehearsal = Listing(DATA_ROOT), Listing(DATA_ROOT)
    models = populate(paper, ("dap",), "paper")
    populate(rehearsal, ("dap",), "rehearsal")
    assert models == ["bert-base-multilingual-cased", "xlm-roberta-base"]
    tatoeba = [n for n in paper.resources if n.startswith("tatoeba")]
    assert len(tatoeba) == 2 * 36 and len(paper.resources) > 3 * len(rehearsal.resources)  # XTREME's 36 languages
    hictl = Listing(DATA_ROOT)
    populate(hictl, ("hictl",), "paper")
    assert sum(r.revision == pf.MANUAL for r in hictl.resources.values()) + len(hictl.manual_files["hictl"]) > 10


def test_gpus_memory_and_disk_findings(tmp_path, monkeypatch):
    cfg = {"training": {"gpus": 8, "keep_checkpoints": 2}, "resources": {"train": {"mem_mb": 256000}}}
    nodes = [{"name": "n1", "gres": "gpu:a100:4", "gpus": 4, "mem_mb": 500000},
             {"name": "n2", "gres": "gpu:a100:8(S:0-1)", "gpus": 8, "mem_mb": 128000}]
    assert pf.gpus(cfg, nodes, None).ok and pf.gpus(cfg, nodes, "a100").ok
    assert not pf.gpus(cfg, nodes, "h100").ok and not pf.gpus(cfg, nodes[:1], None).ok
    cpu = [{"name": "laptop", "gres": "cpu", "gpus": 0, "mem_mb": 16000}]
    assert pf.gpus(cfg, cpu, None, cpu_ranks=True).ok and not pf.gpus(cfg, cpu, None).ok  # the rehearsal: CPU ranks
    assert pf.memory(cfg, nodes).ok and not pf.memory(cfg, nodes[1:]).ok
    # the disk check against 100 GB free, whatever this machine has (CI's had 13 GB)
    monkeypatch.setattr(pf.shutil, "disk_usage", lambda path: SimpleNamespace(free=100 * 10**9))
    small = pf.disk(cfg, runs=2, download_bytes=10**9, weight_bytes=10**9, roots=[tmp_path])
    huge = pf.disk(cfg, runs=10**6, download_bytes=10**9, weight_bytes=10**9, roots=[tmp_path])
    assert small.ok and not huge.ok and "3 x 2 + 1" in small.summary  # 2 runs x 1 GB x 7 + 3 GB


@needs_data
def test_preflight_against_the_rehearsal_mirror(tmp_path):
    """Every download of DAP's rehearsal answers through the mirror (a 503 and cut connections on the way), and
    MoCo-BERT's hand-placed CWMT files are in it; with one file gone from the mirror the preflight fails and names
    it."""
    from common.rehearsal.mirror import build

    mirror = tmp_path / "mirror"
    build(mirror, DATA_ROOT, ("dap", "moco"))
    args = ["--scale", "rehearsal", "--data-root", str(DATA_ROOT), "--mirror", str(mirror),
            "--results-root", str(tmp_path / "results"), "--cache-root", str(tmp_path / "cache")]
    assert pf.main(["--experiment", "dap", "moco", *args]) == 0
    report = json.loads((tmp_path / "results" / "rehearsal" / "moco" / "preflight.json").read_text())
    assert report["findings"][1]["summary"].startswith("6 of 6 present")
    report = json.loads((tmp_path / "results" / "rehearsal" / "dap" / "preflight.json").read_text())
    assert report["ok"] and [f["check"] for f in report["findings"]] == [
        "downloads", "files placed by hand", "data root", "imports", "GPUs", "memory", "disk"]
    gone = next((mirror / "www" / "dl.fbaipublicfiles.com").rglob("XNLI-1.0.zip"))
    gone.unlink()
    assert pf.main(["--experiment", "dap", *args]) == 1
    report = json.loads((tmp_path / "results" / "rehearsal" / "dap" / "preflight.json").read_text())
    downloads = report["findings"][0]
    assert not downloads["ok"] and len(downloads["missing"]) == 1
    assert "XNLI-1.0.zip (HTTP 404)" in downloads["missing"][0]


def test_data_root_finding_names_what_is_read_in_place(tmp_path):
    """At paper scale only what a corpus prep reads in place counts (Tatoeba is downloaded, and the listing of the
    downloads no longer reads its bytes from the data root); at rehearsal scale the Tatoeba files that the mirror
    serves for every experiment too."""
    empty = tmp_path / "empty"
    year = empty / "sts" / "sts12-16" / "STS12-en-test"
    year.mkdir(parents=True)
    (year / "00-readme.txt").write_text("a year folder without its inputs\n")
    assert pf.data_root_files("dap", "paper", empty).ok  # DAP reads nothing in place
    vmsst = pf.data_root_files("vmsst", "paper", empty)
    assert not vmsst.ok and vmsst.summary == f"0 of 15 present under {empty}"
    assert str(year / "STS.input.*.txt") in vmsst.missing
    assert str(empty / "sts" / "sts17" / "STS2017.gs" / "STS.gs.track1.ar-ar.txt") in vmsst.missing
    dap = pf.data_root_files("dap", "rehearsal", empty)
    assert sorted(dap.missing) == sorted(str(empty / "tatoeba_v1" / f"tatoeba.{xx}-eng.{side}")
                                         for xx in ("ara", "cmn", "deu", "fra", "spa", "tur") for side in (xx, "eng"))


@needs_data
def test_data_root_finding_passes_on_the_shared_data():
    for experiment in ("dap", "hictl", "moco", "vmsst"):
        for scale in ("paper", "rehearsal"):
            assert pf.data_root_files(experiment, scale, DATA_ROOT).ok, (experiment, scale)
