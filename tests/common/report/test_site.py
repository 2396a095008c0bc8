"""The static site (``snakemake site``, common/report/site.py) from the committed figures, opened in a real headless
browser: every page renders, every image loads, every link resolves (to a page of the site or a file of the figures,
and an anchor to an element of its page), every page is reachable from the start page, and the leaderboard's
screenshot is not blank. The committed site is what the generator writes from the committed figures."""
from __future__ import annotations

import io
import json
import shutil
import urllib.parse
from pathlib import Path

import pytest

from common.report.html import Converter, slug
from common.report.site import Site
from tests.conftest import ROOT

from . import browser

PAGE_STATE = """JSON.stringify({
  h1: (document.querySelector('h1') || {}).textContent || '',
  text: document.body.innerText.length,
  tables: document.querySelectorAll('table').length,
  images: Array.from(document.images).map(i => ({src: i.src, ok: i.complete && i.naturalWidth > 0})),
  links: Array.from(document.links).map(a => a.href),
  ids: Array.from(document.querySelectorAll('[id]')).map(e => e.id)})"""


def test_markdown_by_hand():
    conv = Converter(link=lambda url: f"files/{url}", id_prefix="p-", shift=1)
    got = conv.convert("# Corpus jobs\n\nSee [below](#corpus-jobs) and **x** `a<b`.\n\n| a | b |\n|---|---|\n| 1 | "
                       "![f](f.png) |\n\n- one\n- *two*\n\n1. first\n2. second\n")
    assert got == ('<h2 id="p-corpus-jobs">Corpus jobs</h2>\n<p>See <a href="#p-corpus-jobs">below</a> and '
                   "<strong>x</strong> <code>a&lt;b</code>.</p>\n"
                   '<div class="table"><table>\n<thead><tr><th>a</th><th>b</th></tr></thead>\n<tbody>\n'
                   '<tr><td>1</td><td><img src="files/f.png" alt="f"></td></tr>\n</tbody>\n</table></div>\n'
                   "<ul>\n<li>one</li>\n<li><em>two</em></li>\n</ul>\n<ol>\n<li>first</li>\n<li>second</li>\n</ol>\n")
    assert slug("Table 1: BUCC (F1, %)") == "table-1-bucc-f1-"


def test_the_digest_follows_the_pages_sources_not_the_measurement_logs(tmp_path):
    from common.report.site import digest

    (tmp_path / "logs").mkdir()
    (tmp_path / "a.md").write_text("# A\n")
    (tmp_path / "logs" / "ci.jsonl").write_text('{"command": "x", "figures": {}}\n')
    before = digest(tmp_path)
    with open(tmp_path / "logs" / "ci.jsonl", "a") as fh:  # a benchmark or CI run appends its row
        fh.write('{"command": "y", "figures": {}}\n')
    assert digest(tmp_path) == before
    (tmp_path / "a.md").write_text("# A, changed\n")
    assert digest(tmp_path) != before


def test_a_link_out_of_the_figures_is_refused(tmp_path):
    (tmp_path / "figures" / "claims").mkdir(parents=True)
    (tmp_path / "figures" / "claims" / "mini.md").write_text("See [the code](../../common/x.py).\n")
    with pytest.raises(FileNotFoundError, match=r"a link to \.\./\.\./common/x\.py, which is not a file of"):
        Site(tmp_path / "figures", tmp_path / "site").build()


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    Site(ROOT / "figures", out).build()
    return out


def test_the_committed_site_is_written_from_the_committed_figures(tmp_path):
    """site/ beside figures/: what the generator writes from a copy of both (run `snakemake site` after a figure
    changes, and commit site/)."""
    shutil.copytree(ROOT / "figures", tmp_path / "figures")
    Site(tmp_path / "figures", tmp_path / "site").build()
    written = {p.name: p.read_bytes() for p in (tmp_path / "site").iterdir()}
    committed = {p.name: p.read_bytes() for p in (ROOT / "site").iterdir()}
    assert sorted(committed) == sorted(written), "site/ is stale: run `snakemake site` and commit site/"
    stale = [name for name in written if written[name] != committed[name]]
    assert not stale, f"site/ is stale ({stale}): run `snakemake site` and commit site/"


def test_the_site_opens_in_a_headless_browser(site, tmp_path):
    exe = browser.executable()
    if exe is None:
        pytest.skip("no chromium found (Debian: apt-get install chromium; CI installs it in .ci/run)")
    pages = sorted(site.glob("*.html"))
    assert {p.stem for p in pages} >= {"index", "leaderboard", "dap", "moco", "hictl", "vmsst", "claims", "census"}
    chrome = browser.Browser(exe, tmp_path / "profile")
    try:
        state, shot = {}, b""
        for page in pages:
            chrome.open(page.as_uri())
            state[page.name] = chrome_state = json.loads(chrome.evaluate(PAGE_STATE))
            assert chrome_state["h1"] and chrome_state["text"] > 300, page.name
            if page.stem == "leaderboard":
                shot = chrome.screenshot()
    finally:
        chrome.close()
    reached, todo = {"index.html"}, ["index.html"]
    for name, s in state.items():
        assert s["tables"] >= (0 if name == "index.html" else 1), name
        bad = [i["src"] for i in s["images"] if not i["ok"]]
        assert not bad, f"{name}: images that did not load: {bad}"
        for href in s["links"]:
            url = urllib.parse.urlsplit(href)
            assert url.scheme == "file", f"{name}: a link out of the site: {href}"
            target = Path(urllib.parse.unquote(url.path))
            inside = site in target.parents or (ROOT / "figures").resolve() in target.resolve().parents
            assert target.is_file() and inside, f"{name}: {href} does not resolve"
            if url.fragment:
                anchor = urllib.parse.unquote(url.fragment)
                assert anchor in state[target.name]["ids"], f"{name}: no #{anchor} in {target.name}"
    while todo:  # every page reachable from the start page
        for href in state[todo.pop()]["links"]:
            name = Path(urllib.parse.urlsplit(href).path).name
            if name.endswith(".html") and name not in reached:
                reached.add(name)
                todo.append(name)
    assert reached == set(state)
    assert sum(len(s["images"]) for s in state.values()) >= 20
    from PIL import Image

    image = Image.open(io.BytesIO(shot)).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 20) or []
    white = sum(n for n, c in colours if c == (255, 255, 255))
    assert image.size[0] >= 800 and len(colours) > 50 and white < 0.97 * image.size[0] * image.size[1]
