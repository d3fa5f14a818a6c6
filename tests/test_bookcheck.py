"""The HTML check of the built book finds each kind of problem a reader would meet, and
nothing on a clean page."""

import base64

from srlib.book.htmlcheck import check_html

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()


def page(body: str, css: str = "s.css") -> str:
    return f'<html><head><link rel="stylesheet" href="{css}"></head><body>{body}</body></html>'


def test_a_clean_build_has_no_problems_and_each_fault_is_named(tmp_path):
    (tmp_path / "s.css").write_text("body {}")
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "a.png").write_bytes(b"png")
    (tmp_path / "img" / "empty.png").write_bytes(b"")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "two.html").write_text(
        page('<h1 id="top">x</h1><a href="../one.html">1</a>', css="../s.css")
    )
    clean = page(
        '<section id="s1"><a href="#s1">here</a><a href="#">top</a>'
        '<a href="b/two.html#top">2</a><a href="https://example.org/x">ext</a>'
        f'<img src="img/a.png"><img src="data:image/png;base64,{PNG}"></section>'
    )
    (tmp_path / "one.html").write_text(clean)
    assert check_html(tmp_path) == []
    broken = page(
        '<a href="#nowhere">a</a><a href="b/two.html#gone">b</a><a href="missing.html">c</a>'
        '<img src="img/empty.png"><img src="img/none.png"><img src="data:image/png;base64,">'
        '<script src="gone.js"></script>'
        '<div class="output traceback highlight-ipythontb"><pre>ValueError</pre></div>'
        '<div class="output stream highlight-myst-ansi"><div class="highlight"><pre>\n\n'
        "</pre></div></div>"
        '<div class="output stream"><div><pre>printed</pre></div></div>'
    )
    (tmp_path / "three.html").write_text(broken)
    found = {(p.kind, p.detail) for p in check_html(tmp_path) if p.page == "three.html"}
    assert found == {
        ("broken anchor", "#nowhere"),
        ("broken anchor", "b/two.html#gone"),
        ("broken link", "missing.html"),
        ("missing image", "img/empty.png"),
        ("missing image", "img/none.png"),
        ("empty image", "data:image/png;base64,"),
        ("missing resource", "gone.js"),
        ("error output", "1 code cell error(s)"),
        ("empty output", "1 empty box(es)"),
    }


def test_an_empty_folder_is_a_problem(tmp_path):
    (problem,) = check_html(tmp_path)
    assert problem.kind == "no pages"


def test_the_browser_sees_script_errors_and_images_it_cannot_show(tmp_path):
    import pytest

    from srlib.book.browsercheck import check_in_browser, find_browser

    if find_browser() is None:
        pytest.skip("no Chromium installed (.ci/run installs Debian's)")
    png = base64.b64decode(  # a real 1×1 PNG: shown
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    )
    (tmp_path / "ok.png").write_bytes(png)
    (tmp_path / "bad.png").write_bytes(b"not a png")
    (tmp_path / "good.html").write_text('<html><body><img src="ok.png"></body></html>')
    (tmp_path / "bad.html").write_text(
        '<html><body><img src="bad.png"><script>undefinedFunction()</script></body></html>'
    )
    problems = check_in_browser(tmp_path, tmp_path / "shots")
    kinds = {(p.page, p.kind) for p in problems}
    assert kinds == {("bad.html", "javascript error"), ("bad.html", "image not shown")}
    shots = {p.name for p in (tmp_path / "shots").iterdir()}
    assert shots == {
        f"{page}.html{end}" for page in ("good", "bad") for end in (".png", ".first.png")
    }


def test_a_chapter_must_open_on_its_answer(tmp_path):
    """In the browser: a chapter page's answer box must hold a sentence and end on the first
    screen (1280 × 800); a chapter without one is a problem, another page is not asked."""
    import pytest

    from srlib.book.browsercheck import check_in_browser, find_browser

    if find_browser() is None:
        pytest.skip("no Chromium installed (.ci/run installs Debian's)")
    box = '<div class="admonition answer"><p>The answer</p><p>{}</p></div>'
    said = box.format("Three of six contrasts are better, family-wise.")
    chapters = tmp_path / "_executed"
    chapters.mkdir()
    pages = {
        "top": f"<h1>Title</h1>{said}",
        "low": f'<h1>Title</h1><div style="height:900px"></div>{said}',
        "empty": "<h1>Title</h1>" + box.format(""),
        "none": "<h1>Title</h1><p>No box.</p>",
    }
    for name, body in pages.items():
        (chapters / f"{name}.html").write_text(f"<html><body>{body}</body></html>")
    (tmp_path / "glossary.html").write_text("<html><body><p>Terms.</p></body></html>")
    found = {(p.page, p.kind) for p in check_in_browser(tmp_path, tmp_path / "shots")}
    assert found == {
        ("_executed/low.html", "answer below the first screen"),
        ("_executed/empty.html", "empty answer"),
        ("_executed/none.html", "no answer box"),
    }


def test_a_layout_problem_is_reported_and_the_book_kept(tmp_path, capsys):
    """An answer below the first screen does not fail a build of hours: it is printed and
    listed in ``_build/layout-problems.txt``; any other problem still fails the build; a clean
    rebuild removes the list."""
    from srlib.book.htmlcheck import Problem
    from srlib.book.runner import _layout_said

    html = tmp_path / "_build" / "html"
    html.mkdir(parents=True)
    low = Problem("_executed/04.html", "answer below the first screen", "it ends 808 px down")
    broken = Problem("_executed/05.html", "image not shown", "x.png")
    assert _layout_said(html, [low, broken]) == [broken]
    report = tmp_path / "_build" / "layout-problems.txt"
    assert report.read_text() == f"{low}\n"
    assert "LAYOUT PROBLEM (the book is kept)" in capsys.readouterr().out
    assert _layout_said(html, []) == [] and not report.exists()


def test_a_layout_is_measured_with_another_answer_in_the_box(tmp_path):
    """``answer_bottom`` puts the given answer in place of the page's and says where the box
    then ends: lower for a longer answer."""
    import pytest

    from srlib.book.browsercheck import answer_bottom, find_browser

    if find_browser() is None:
        pytest.skip("no Chromium installed (.ci/run installs Debian's)")
    page = tmp_path / "chapter.html"
    page.write_text(
        '<html><body><h1>Title</h1><div class="admonition answer"><p>The answer</p>'
        "<p>Short.</p></div></body></html>"
    )
    short = answer_bottom(page, "**Short**.")
    long = answer_bottom(page, "**A much longer answer** <b>" + "word " * 400)
    assert 0 < short < long
