"""The mirror server and the downloader against it: byte ranges, a 503 retried, a connection cut mid-file resumed
with a range request, a partial file left by a killed process resumed, and a resumed file whose digest fails
fetched again from zero."""
import hashlib
import logging
import urllib.request

import pytest

from common.data import download as dl
from common.data.mirror_server import MirrorServer

DATA = bytes(range(256)) * 40  # 10,240 bytes


@pytest.fixture
def www(tmp_path):
    f = tmp_path / "www" / "example.org" / "v1" / "data.bin"
    f.parent.mkdir(parents=True)
    f.write_bytes(DATA)
    return tmp_path / "www"


RES = dl.Resource("data.bin", "https://example.org/v1/data.bin", sha256=hashlib.sha256(DATA).hexdigest())


def test_ranges_and_404(www):
    with MirrorServer(www) as s:
        req = urllib.request.Request(f"{s.url}/example.org/v1/data.bin", headers={"Range": "bytes=10000-"})
        with urllib.request.urlopen(req) as resp:
            assert resp.status == 206 and resp.read() == DATA[10000:]
        with pytest.raises(urllib.error.HTTPError, match="404"):
            urllib.request.urlopen(f"{s.url}/example.org/v1/missing")
        with pytest.raises(urllib.error.HTTPError, match="404"):
            urllib.request.urlopen(f"{s.url}/../../etc/passwd")


@pytest.mark.parametrize("fault", ["503", "cut"])
def test_one_fault_is_retried_or_resumed(www, tmp_path, caplog, fault):
    caplog.set_level(logging.INFO)
    with MirrorServer(www, faults={"/example.org/v1/data.bin": fault}) as s:
        path = dl.Downloader(tmp_path / "dl", base_url=s.url, retry_wait=0.01).fetch(RES)
        assert s.fired == [("/example.org/v1/data.bin", fault)]
    assert path.read_bytes() == DATA and not path.with_name("data.bin.part").exists()
    assert ("resumed at byte 5120" in caplog.text) == (fault == "cut")


def test_a_partial_file_of_a_killed_process_is_resumed(www, tmp_path, caplog):
    caplog.set_level(logging.INFO)
    (tmp_path / "dl").mkdir()
    (tmp_path / "dl" / "data.bin.part").write_bytes(DATA[:3000])
    with MirrorServer(www) as s:
        assert dl.Downloader(tmp_path / "dl", base_url=s.url).fetch(RES).read_bytes() == DATA
    assert "resumed at byte 3000" in caplog.text


def test_a_corrupt_partial_file_is_fetched_again(www, tmp_path):
    (tmp_path / "dl").mkdir()
    (tmp_path / "dl" / "data.bin.part").write_bytes(b"\xff" * 3000)  # not the file's first bytes
    with MirrorServer(www) as s:
        assert dl.Downloader(tmp_path / "dl", base_url=s.url).fetch(RES).read_bytes() == DATA


def test_persistent_failure_is_an_error_and_a_bad_pin_still_fails(www, tmp_path):
    with MirrorServer(www) as s:
        with pytest.raises(urllib.error.URLError):
            dl.Downloader(tmp_path / "a", base_url=s.url.rsplit(":", 1)[0] + ":1", retries=1,
                          retry_wait=0.01).fetch(RES)
        bad = dl.Resource("data.bin", RES.url, sha256="0" * 64)
        with pytest.raises(dl.ChecksumError, match="does not match the pinned"):
            dl.Downloader(tmp_path / "b", base_url=s.url).fetch(bad)
        assert not (tmp_path / "b" / "data.bin").exists() and not (tmp_path / "b" / "data.bin.part").exists()
        # a pin override (the rehearsal mirror's own digests) replaces the resource's pin
        ok = dl.Downloader(tmp_path / "c", base_url=s.url, pins={"data.bin": RES.sha256}).fetch(bad)
        assert ok.read_bytes() == DATA
