"""A table offered whole as a CSV file from the rendered page itself (a ``data:`` link, so
the static HTML needs no file beside it): the chapters show a compact table and fold the
full one, and a reader who wants every number takes it here."""

from __future__ import annotations

import base64
import html
import re
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    import IPython.display

LIMIT = 2_000_000
"""The largest CSV, in bytes, a page carries (a link, not a page, should hold a big table)."""


def csv_link(table: pd.DataFrame, name: str, index: bool = True) -> str:
    """An HTML link that saves ``table`` as ``<name>.csv``; a table over ``LIMIT`` bytes is
    an error naming it (write it to a file instead)."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise ValueError(f"download name {name!r}: use letters, digits, '.', '_' or '-'")
    data = table.to_csv(index=index).encode("utf-8")
    if len(data) > LIMIT:
        raise ValueError(f"table {name!r} is {len(data):,} bytes as CSV, over {LIMIT:,}")
    uri = "data:text/csv;charset=utf-8;base64," + base64.b64encode(data).decode("ascii")
    rows = f"{len(table):,} rows"
    return (
        f'<a download="{html.escape(name)}.csv" href="{uri}">⬇ {html.escape(name)}.csv</a> ({rows})'
    )


def csv_download(table: pd.DataFrame, name: str, index: bool = True):
    """``csv_link`` displayed in a notebook."""
    from IPython.display import HTML

    return HTML(csv_link(table, name, index))


def whole(table: pd.DataFrame) -> IPython.display.HTML:
    """``table`` as the page shows it, every row and column (pandas' display settings would cut
    a long table to its first and last rows behind a "…" row a reader cannot open)."""
    from IPython.display import HTML

    return HTML(table.to_html())
