"""Checks of the built book as a reader meets it, on the HTML alone (no browser): every
image file present and non-empty (or a non-empty ``data:`` URI), every internal link and
anchor resolving, every stylesheet and script present, and no code cell showing an error
or an empty output box.
The browser check (``srlib.book.browsercheck``) adds what only a browser sees."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


@dataclass(frozen=True)
class Problem:
    """One thing wrong on one page: the page (relative to the build), its kind, details."""

    page: str
    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.page}: {self.kind}: {self.detail}"


class _Page(HTMLParser):
    """The ids, links, images, resources and error outputs of one HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.images: list[str] = []
        self.resources: list[str] = []
        self.errors = 0
        self.empty_outputs = 0
        self._stream_depth = 0  # inside a stream output: its div depth, else 0
        self._stream_text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        for key in ("id", "name") if tag == "a" else ("id",):
            if a.get(key):
                self.ids.add(a[key])
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        elif tag == "img":
            self.images.append(a.get("src", ""))
        elif tag == "link" and a.get("href") and "stylesheet" in a.get("rel", ""):
            self.resources.append(a["href"])
        elif tag == "script" and a.get("src"):
            self.resources.append(a["src"])
        classes = a.get("class", "").split()
        if "output" in classes and ("traceback" in classes or "error" in classes):
            self.errors += 1
        if tag == "div":
            if self._stream_depth:
                self._stream_depth += 1
            elif "output" in classes and "stream" in classes:
                self._stream_depth, self._stream_text = 1, []

    def handle_endtag(self, tag: str) -> None:
        if tag == "div" and self._stream_depth:
            self._stream_depth -= 1
            if not self._stream_depth and not "".join(self._stream_text).strip():
                self.empty_outputs += 1

    def handle_data(self, data: str) -> None:
        if self._stream_depth:
            self._stream_text.append(data)


def _internal(url: str) -> bool:
    parts = urlsplit(url)
    return not parts.scheme and not parts.netloc and not url.startswith("//")


def check_html(build: str | Path) -> list[Problem]:
    """Every problem in the HTML build folder ``build`` (e.g. ``_build/html``); [] if none."""
    build = Path(build)
    pages = {p: _parse(p) for p in sorted(build.rglob("*.html")) if "_static" not in p.parts}
    if not pages:
        return [Problem(str(build), "no pages", "the folder holds no HTML pages")]
    problems = []
    for path, page in pages.items():
        name = str(path.relative_to(build))
        for src in page.images:
            problems += _image(build, path, name, src)
        for href in page.resources:
            target = _target(path, href)
            if target is not None and not target.is_file():
                problems.append(Problem(name, "missing resource", href))
        for href in page.links:
            problems += _link(build, pages, path, name, href)
        if page.errors:
            problems.append(Problem(name, "error output", f"{page.errors} code cell error(s)"))
        if page.empty_outputs:
            problems.append(Problem(name, "empty output", f"{page.empty_outputs} empty box(es)"))
    return problems


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _target(page: Path, url: str) -> Path | None:
    """The file an internal URL points to (None for external URLs and bare fragments)."""
    if not _internal(url):
        return None
    path = unquote(urlsplit(url).path)
    return (page.parent / path).resolve() if path else None


def _image(build: Path, path: Path, name: str, src: str) -> list[Problem]:
    if not src:
        return [Problem(name, "image without src", "<img> has no source")]
    if src.startswith("data:"):
        try:
            payload = base64.b64decode(src.split(",", 1)[1], validate=True)
        except (IndexError, binascii.Error):
            payload = b""
        return [] if payload else [Problem(name, "empty image", src[:40])]
    target = _target(path, src)
    if target is None:
        return []
    if not target.is_file() or target.stat().st_size == 0:
        return [Problem(name, "missing image", src)]
    return []


def _link(build: Path, pages: dict, path: Path, name: str, href: str) -> list[Problem]:
    if not _internal(href) or href in ("#", ""):
        return []
    parts = urlsplit(href)
    target = _target(path, href) or path.resolve()
    if target.is_dir():
        target = target / "index.html"
    if not target.exists():
        return [Problem(name, "broken link", href)]
    fragment = unquote(parts.fragment)
    if fragment and target.suffix == ".html":
        page = next((p for q, p in pages.items() if q.resolve() == target), None)
        if page is not None and fragment not in page.ids:
            return [Problem(name, "broken anchor", href)]
    return []
