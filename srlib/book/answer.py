"""A chapter's answer on its first screen: the sentences its cells compute, pasted into a box
under the title (``BOX``, MyST-NB's ``glue``), so a reader meets the result before the data,
settings and method that produce it — whichever cell computes it, however far down."""

from __future__ import annotations

from srlib.execution.progress import run_by_book

KEY = "answer"
"""The glue key of a chapter's answer (one per page)."""

BOX = f"""````{{admonition}} The answer
:class: important answer
```{{glue:md}} {KEY}
:format: myst
```
````"""
"""The markdown of the box under a chapter's title; ``srlib.book.browsercheck`` checks that it
is on the page's first screen."""


SHOWN = "**The answer** (the book shows it in a box under the chapter's title)"
"""The heading of the answer where a cell shows it (no book renders the box)."""


def answer_text(*sentences: str) -> str:
    """``sentences`` as one paragraph (empty ones dropped); an answer needs at least one."""
    text = " ".join(s.strip() for s in sentences if s and s.strip())
    if not text:
        raise ValueError("a chapter's answer needs at least one sentence")
    return text


def glue_answer(*sentences: str) -> None:
    """Glue ``sentences`` (``answer_text``) as the chapter's answer.

    In the book the page's ``BOX`` shows it, not the cell where this runs. Where no book renders
    the box (JupyterLab, or papermill run by hand) the cell shows it as well, under ``SHOWN``,
    so a reader who runs the chapter sees the answer where it is computed.
    The book's runner marks its kernels (``srlib.execution.progress.run_by_book``). Nothing is
    returned: a cell that ends with this call shows no value, whichever runner executes it."""
    from IPython.display import Markdown, display
    from myst_nb import glue

    text = answer_text(*sentences)
    glue(KEY, Markdown(text), display=False)
    if not run_by_book():
        display(Markdown(f"{SHOWN}\n\n{text}"))
