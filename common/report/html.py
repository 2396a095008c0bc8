"""The Markdown the reports write, as HTML: headings (with GitHub's anchors), paragraphs, bullet and numbered lists,
pipe tables, images, and inline code, bold, italics, links and images. Only that subset: every Markdown file under
``figures/`` is written by this repository's report code (:mod:`common.report.tables`, :mod:`common.report.index`,
the census and the claims index), so a general converter (and a dependency) would buy nothing.

Text is HTML-escaped; a relative link or image goes through ``link`` (the site copies the file it names and
returns where the copy is); an anchor link (``#corpus-jobs``) and every heading's id get ``id_prefix``, so that
several documents share one page without their anchors colliding.
"""
from __future__ import annotations

import html
import re
from collections.abc import Callable

Link = Callable[[str], str]
_INLINE = re.compile(r"(?P<code>`[^`]+`)|!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)\)"
                     r"|\[(?P<text>[^\]]+)\]\((?P<href>[^)\s]+)\)"
                     r"|\*\*(?P<bold>.+?)\*\*|(?<![\w*])\*(?P<em>[^*\s][^*]*?)\*(?![\w*])")
_TABLE_RULE = re.compile(r"^\|(\s*:?-+:?\s*\|)+\s*$")
_NUMBERED = re.compile(r"^\d+\.\s+")


def slug(text: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


class Converter:
    def __init__(self, link: Link = lambda url: url, id_prefix: str = "", shift: int = 0):
        self.link, self.prefix, self.shift = link, id_prefix, shift
        self.ids: set[str] = set()
        self.headings: list[tuple[int, str, str]] = []  # (level, text, id) of every heading, in order

    def _href(self, url: str) -> str:
        if url.startswith("#"):
            return "#" + self.prefix + url[1:]
        if re.match(r"^[a-z]+:", url):
            return url
        return self.link(url)

    def inline(self, text: str) -> str:
        out, pos = [], 0
        for m in _INLINE.finditer(text):
            out.append(html.escape(text[pos:m.start()], quote=False))
            pos = m.end()
            if m["code"]:
                out.append(f"<code>{html.escape(m['code'][1:-1], quote=False)}</code>")
            elif m["src"]:
                out.append(f'<img src="{html.escape(self._href(m["src"]))}" alt="{html.escape(m["alt"])}">')
            elif m["href"]:
                out.append(f'<a href="{html.escape(self._href(m["href"]))}">{self.inline(m["text"])}</a>')
            elif m["bold"]:
                out.append(f"<strong>{self.inline(m['bold'])}</strong>")
            else:
                out.append(f"<em>{self.inline(m['em'])}</em>")
        out.append(html.escape(text[pos:], quote=False))
        return "".join(out)

    def heading(self, level: int, text: str) -> str:
        base = self.prefix + slug(text)
        anchor, n = base, 0
        while anchor in self.ids:
            n += 1
            anchor = f"{base}-{n}"
        self.ids.add(anchor)
        level = min(6, level + self.shift)
        self.headings.append((level, text, anchor))
        return f'<h{level} id="{anchor}">{self.inline(text)}</h{level}>'

    @staticmethod
    def _cells(line: str) -> list[str]:
        return [c.strip() for c in line.strip().strip("|").split("|")]

    def table(self, lines: list[str]) -> str:
        head, *rows = [self._cells(line) for i, line in enumerate(lines) if i != 1]
        th = "".join(f"<th>{self.inline(c)}</th>" for c in head)
        body = "".join("<tr>" + "".join(f"<td>{self.inline(c)}</td>" for c in row) + "</tr>\n" for row in rows)
        return f'<div class="table"><table>\n<thead><tr>{th}</tr></thead>\n<tbody>\n{body}</tbody>\n</table></div>'

    def convert(self, text: str) -> str:
        lines, out, i = text.splitlines(), [], 0
        while i < len(lines):
            line = lines[i]
            if not line.strip():
                i += 1
            elif m := re.match(r"^(#{1,6})\s+(.*)$", line):
                out.append(self.heading(len(m.group(1)), m.group(2).strip()))
                i += 1
            elif line.startswith("|") and i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1]):
                j = i + 2
                while j < len(lines) and lines[j].startswith("|"):
                    j += 1
                out.append(self.table(lines[i:j]))
                i = j
            elif line.startswith(("- ", "* ")) or _NUMBERED.match(line):
                numbered = bool(_NUMBERED.match(line))
                items = []
                while i < len(lines) and (_NUMBERED.match(lines[i]) if numbered else lines[i].startswith(("- ", "* "))):
                    items.append(_NUMBERED.sub("", lines[i]) if numbered else lines[i][2:])
                    i += 1
                tag = "ol" if numbered else "ul"
                out.append(f"<{tag}>\n" + "".join(f"<li>{self.inline(t)}</li>\n" for t in items) + f"</{tag}>")
            else:
                para = []
                while i < len(lines) and lines[i].strip() and not re.match(r"^(#{1,6}\s|\||- |\* |\d+\.\s)", lines[i]):
                    para.append(lines[i].strip())
                    i += 1
                if not para:  # a line no block takes (a lone '|'): as text
                    para, i = [line.strip()], i + 1
                out.append(f"<p>{self.inline(' '.join(para))}</p>")
        return "\n".join(out) + "\n"
