"""The built book opened page by page in a real browser (headless Chromium, driven by
Playwright; the Debian package ``chromium`` is enough, nothing is downloaded): a JavaScript
error, an image the browser could not decode (``naturalWidth == 0``), a code cell's error
output, or a chapter's answer box (``srlib.book.answer``) that is empty or below its first
screen (``FIRST_SCREEN``) is a problem; a full-page screenshot and one of the first screen
are saved per page for a reader to look at.
``srlib.book.htmlcheck`` checks the same HTML without a browser."""

from __future__ import annotations

import shutil
from pathlib import Path

from srlib.book.htmlcheck import Problem
from srlib.errors import SrlibError

FIRST_SCREEN = {"width": 1280, "height": 800}
"""What a reader sees before scrolling, on a laptop: a chapter's answer must fit in it."""

ROOM = 48
"""Pixels the longest answer the code can write must leave free at the foot of the first screen
(``answer_bottom``; two lines of text). That answer is already every CPU class's worst case
(each number at its widest): the room is for another browser's or font's line breaks."""

LAYOUT = frozenset({"answer below the first screen"})
"""The kinds of problem that are layout, not content: ``srlib.book.runner.build`` reports them
and keeps the book (its pages are whole; the answer sits lower than it should), where any other
problem fails the build."""

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

_SETTLE = r"""async () => {
  for (const img of document.images) { img.loading = "eager"; }
  await Promise.all(Array.from(document.images).map(img => img.complete ? null :
    new Promise(done => { img.onload = img.onerror = done; setTimeout(done, 5000); })));
  return {
    broken: Array.from(document.images)
      .filter(img => img.naturalWidth === 0).map(img => img.getAttribute("src").slice(0, 80)),
    errors: document.querySelectorAll(".output.traceback, .output.error").length,
    answer: Array.from(document.querySelectorAll(".admonition.answer")).map(box => ({
      bottom: box.getBoundingClientRect().bottom + window.scrollY,
      words: box.innerText.split(/\s+/).filter(w => w).length,
    })),
  };
}"""


def _redirect(page: Path) -> bool:
    """A page that only forwards to another (``index.html``): the browser checks the target."""
    head = page.read_text(encoding="utf-8", errors="replace")[:2000].lower()
    return 'http-equiv="refresh"' in head


class NoBrowser(SrlibError):
    """No Chromium to check the book with; names what to install."""


def find_browser() -> str | None:
    """The path of an installed Chromium or Chrome, or None."""
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def _browser(executable: str | None) -> str:
    """``executable``, or the installed Chromium; none: an error naming what to install."""
    executable = executable or find_browser()
    if executable is None:
        raise NoBrowser("no Chromium found: install it (Debian: apt-get install chromium)")
    return executable


def check_in_browser(
    build: str | Path, screenshots: str | Path | None = None, executable: str | None = None
) -> list[Problem]:
    """Open every page of the HTML build in headless Chromium; the problems found, and a
    screenshot per page in ``screenshots`` (default: ``<build>/../screenshots``)."""
    from playwright.sync_api import sync_playwright

    build = Path(build)
    executable = _browser(executable)
    shots = Path(screenshots) if screenshots else build.parent / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    pages = sorted(
        p for p in build.rglob("*.html") if "_static" not in p.parts and not _redirect(p)
    )
    problems: list[Problem] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        tab = browser.new_page(viewport=FIRST_SCREEN)
        seen: list[str] = []
        tab.on("pageerror", lambda e: seen.append(f"{e}"))
        tab.on("console", lambda m: seen.append(m.text) if m.type == "error" else None)
        for path in pages:
            name = str(path.relative_to(build))
            seen.clear()
            tab.goto(path.resolve().as_uri(), wait_until="load")
            state = tab.evaluate(_SETTLE)
            shot = shots / name.replace("/", "__")
            tab.screenshot(path=f"{shot}.png", full_page=True)
            tab.screenshot(path=f"{shot}.first.png")
            problems += [Problem(name, "javascript error", text) for text in seen]
            problems += [Problem(name, "image not shown", src) for src in state["broken"]]
            if state["errors"]:
                problems.append(
                    Problem(name, "error output", f"{state['errors']} code cell error(s)")
                )
            problems += answer_problems(name, state["answer"])
        browser.close()
    return problems


_REPLACE = r"""html => {
  const box = document.querySelector(".admonition.answer");
  const paragraphs = box.querySelectorAll("p");
  paragraphs[paragraphs.length - 1].innerHTML = html;
  return box.getBoundingClientRect().bottom + window.scrollY;
}"""


def answer_bottom(page: str | Path, markdown: str, executable: str | None = None) -> float:
    """Where a built chapter page's answer box ends, in pixels from the top at ``FIRST_SCREEN``,
    with ``markdown`` (plain text with ``**bold**``) in place of the answer it holds: how a
    layout is tested with the longest answer the code can write, in the book's own theme."""
    import html
    import re

    from playwright.sync_api import sync_playwright

    executable = _browser(executable)
    body = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", html.escape(markdown))
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        tab = browser.new_page(viewport=FIRST_SCREEN)
        tab.goto(Path(page).resolve().as_uri(), wait_until="load")
        tab.evaluate(_SETTLE)
        bottom = float(tab.evaluate(_REPLACE, body))
        browser.close()
    return bottom


def answer_problems(page: str, boxes: list[dict]) -> list[Problem]:
    """A chapter page's answer box (``boxes``: each one's bottom edge in pixels from the top
    of the page and its word count) must hold more than its title and end on the first
    screen; every chapter (a page of executed notebooks) has one."""
    problems = []
    if "_executed" in page and not boxes:
        problems.append(Problem(page, "no answer box", "a chapter opens on its answer"))
    for box in boxes:
        if box["words"] <= 2:
            problems.append(Problem(page, "empty answer", "the answer box holds no sentence"))
        elif box["bottom"] > FIRST_SCREEN["height"]:
            where = f"it ends {box['bottom']:.0f} px down, the first screen at"
            problems.append(
                Problem(page, "answer below the first screen", f"{where} {FIRST_SCREEN['height']}")
            )
    return problems
