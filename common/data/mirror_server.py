"""A local HTTP server for a mirror folder (``<root>/<host>/<path>``, the layout ``Downloader(base_url=...)``
requests), with byte ranges and injected faults.

* ``Range: bytes=N-`` is answered with 206 and the rest of the file (a resumed download);
* ``faults`` maps a request path to ``"503"`` (the first request of that path fails with HTTP 503: the
  downloader retries) or ``"cut"`` (the first response sends half the body and closes the connection: the
  downloader resumes with a range request). Each fault fires once per server, except ``"truncated"``: every
  response of that path sends half the body and closes the connection (a host that never delivers the file).

    with MirrorServer(root, faults={"/host/file.zip": "cut"}) as url: ...   # url: http://127.0.0.1:<port>
"""
from __future__ import annotations

import contextlib
import http.server
import json
import logging
import shutil
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)
FAULTS = ("503", "cut", "truncated")


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, fmt: str, *args: Any) -> None:  # quiet: the downloader logs what matters
        log.debug(fmt, *args)

    def do_HEAD(self) -> None:  # noqa: N802 (http.server's naming)
        self._answer(body=False)

    def do_GET(self) -> None:  # noqa: N802
        self._answer(body=True)

    def _answer(self, body: bool) -> None:
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        file = (self.server.root / path.lstrip("/")).resolve()
        if self.server.root not in file.parents or not file.is_file():
            self.send_error(404)
            return
        fault = self.server.take_fault(path)
        if fault == "503":
            self.send_error(503, "injected fault")
            return
        data = file.read_bytes()
        start = 0
        if (rng := self.headers.get("Range", "")).startswith("bytes="):
            start = int(rng[len("bytes="):].split("-")[0] or 0)
            if start >= len(data):
                self.send_error(416)
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(data) - start))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        if not body:
            return
        if fault in ("cut", "truncated"):
            self.wfile.write(data[start:start + (len(data) - start) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(data[start:])


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, root: Path, faults: dict[str, str]):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.root = root.resolve()
        unknown = {f for f in faults.values() if f not in FAULTS}
        if unknown:
            raise ValueError(f"unknown faults {sorted(unknown)}; expected {FAULTS}")
        self.faults, self.lock = dict(faults), threading.Lock()
        self.fired: list[tuple[str, str]] = []

    def take_fault(self, path: str) -> str | None:
        with self.lock:
            fault = self.faults.get(path) if self.faults.get(path) == "truncated" else self.faults.pop(path, None)
            if fault:
                self.fired.append((path, fault))
            return fault


class MirrorServer:
    def __init__(self, root: str | Path, faults: dict[str, str] | None = None):
        self.httpd = _Server(Path(root), faults or {})
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def fired(self) -> list[tuple[str, str]]:
        """The faults that fired: (path, fault)."""
        return list(self.httpd.fired)

    def __enter__(self) -> MirrorServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@contextlib.contextmanager
def serving(mirror: str | Path | None,
            base_url: str | None = None) -> Iterator[tuple[str | None, dict[str, str] | None]]:
    """``(base_url, pins)`` for a download job: a rehearsal mirror folder served on a local port for the duration
    (its pins and faults), or the given ``base_url`` (a site mirror, the real pins) when no folder is given."""
    if mirror is None:
        yield base_url, None
        return
    root = Path(mirror)
    faults = json.loads((root / "faults.json").read_text())
    with MirrorServer(root / "www", faults) as server:
        yield server.url, json.loads((root / "pins.json").read_text())
        if server.fired:
            log.info("mirror faults that fired (and were recovered from): %s", server.fired)


def place_manual(mirror: str | Path | None, experiment: str, out: Path) -> None:
    """Copy the mirror's hand-placed files of ``experiment`` to ``<out>/manual/`` (the user's step at paper scale)."""
    src = Path(mirror) / "manual" / experiment if mirror else None
    if src is not None and src.is_dir():
        shutil.copytree(src, out / "manual", dirs_exist_ok=True)
