"""A local HTTP server that stands in for the download sites: files in the real formats under
``<root>/<host>/<path>``, reached through ``Downloader(base_url=...)``."""
import functools
import hashlib
import http.server
import threading
import urllib.parse
from pathlib import Path

import pytest

from common.rehearsal.mirror import tar_bytes, zip_bytes


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def serve(root: Path, url: str, data: bytes) -> str:
    parts = urllib.parse.urlsplit(url)
    path = root / parts.netloc / parts.path.lstrip("/")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def _zip(members: dict[str, str]) -> bytes:
    return zip_bytes(members)


def _tar_bz2(members: dict[str, str | bytes], mode: str = "w:bz2") -> bytes:
    return tar_bytes(members, mode)


