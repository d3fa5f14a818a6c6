"""A chapter's answer on its first screen: the sentences its cells compute, pasted into a box
under the title (``BOX``, MyST-NB's ``glue``), so a reader meets the result before the data,
settings and method that produce it — whichever cell computes it, however far down."""

from __future__ import annotations

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


def glue_answer(*sentences: str) -> str:
    """Glue ``sentences`` as the chapter's answer (shown in ``BOX``, not where this runs) and
    return them as one paragraph."""
    from IPython.display import Markdown
    from myst_nb import glue

    text = " ".join(s.strip() for s in sentences if s and s.strip())
    if not text:
        raise ValueError("a chapter's answer needs at least one sentence")
    glue(KEY, Markdown(text), display=False)
    return text
