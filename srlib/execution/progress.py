"""Progress bars for long-running work: widgets in JupyterLab, plain lines everywhere else.

Every bar in srlib comes from ``tqdm`` below. A terminal gets tqdm's text bar. A Jupyter kernel
gets ``tqdm.auto``'s widget (ipywidgets), which JupyterLab draws as a bar. The book's runner
(``srlib book``, which executes the chapters with papermill) marks its kernels with
``BOOK_RUNNER`` in their environment. There every bar is the text bar: the executed notebook
stores a few plain lines on stderr, which read the same in the runner's log and on the page,
where a widget would store its state and print nothing. The variable changes only how progress
is drawn, never what is computed.
"""

from __future__ import annotations

import os
from typing import Any

BOOK_RUNNER = "SRLIB_BOOK_RUNNER"
"""Set (to ``1``) in the environment of the kernels the book's runner starts."""


def run_by_book() -> bool:
    """Whether the book's runner executes this process (``BOOK_RUNNER`` is set)."""
    return os.environ.get(BOOK_RUNNER, "") not in ("", "0")


def tqdm(*args: Any, **kwargs: Any) -> Any:
    """A progress bar, as ``tqdm.tqdm`` takes it: a widget in a Jupyter kernel that the book's
    runner did not start, a text bar otherwise."""
    if run_by_book():
        from tqdm.std import tqdm as bar
    else:
        from tqdm.auto import tqdm as bar
    return bar(*args, **kwargs)
