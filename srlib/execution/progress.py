"""Progress bars for long-running work: widgets in JupyterLab, plain lines in the book's log.

Every bar in srlib comes from ``tqdm`` below. A terminal gets tqdm's text bar. A Jupyter kernel
gets ``tqdm.auto``'s widget (ipywidgets), which JupyterLab draws as a bar. The book's runner
(``srlib book``, which executes the chapters with papermill) names a log file in ``BOOK_RUNNER``
in the environment its kernels start from; there every bar is a text bar appended to that log
(``book/_executed/progress.log``: follow it with ``tail -f``), never an output of the chapter.
A chapter's outputs are then the same whether it trained its models or read them from the cache,
which is what lets ``nbval`` compare a rerun with the book cell by cell. The runner also turns
off the bars and warnings of the Hugging Face libraries in its kernels (``QUIET``). None of this
changes what is computed, only where progress is drawn.
"""

from __future__ import annotations

import functools
import os
from typing import IO, Any

BOOK_RUNNER = "SRLIB_BOOK_RUNNER"
"""Set by the book's runner for its kernels: the file their progress bars append to."""
QUIET = {
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",  # transformers' loading and saving bars
    "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",  # its advice on loss types and attention masks
}
"""What the book's runner sets beside ``BOOK_RUNNER``: the Hugging Face libraries' own bars and
warnings, printed only where a chapter builds what a rerun reads from the cache, kept out of the
chapters' outputs."""


def run_by_book() -> bool:
    """Whether the book's runner executes this process (``BOOK_RUNNER`` is set)."""
    return bool(os.environ.get(BOOK_RUNNER))


@functools.cache
def _log(path: str) -> IO[str]:
    """The book's progress log, opened once per process for appending, a line at a time."""
    return open(path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 (open for the process)


def tqdm(*args: Any, **kwargs: Any) -> Any:
    """A progress bar, as ``tqdm.tqdm`` takes it: a text bar in the book's progress log when the
    book's runner executes this process, else a widget in a Jupyter kernel or a text bar."""
    log = os.environ.get(BOOK_RUNNER)
    if log:
        from tqdm.std import tqdm as bar

        kwargs.setdefault("file", _log(log))
    else:
        from tqdm.auto import tqdm as bar
    return bar(*args, **kwargs)
