"""User-facing errors: a bad input or a missing resource, reported by the CLI in one line.

Everything the user can fix (a file, a name, a folder, a server) raises a subclass of
``SrlibError`` whose message names the input; anything else is a bug and keeps its
traceback. An ``OSError`` from opening files is reported the same way by the CLI.
"""

from __future__ import annotations


class SrlibError(Exception):
    """A problem with the caller's input or environment; the message names the input."""


class InputError(SrlibError, ValueError):
    """A file or record is malformed (not UTF-8, not JSON, wrong schema); names file and line."""


class CacheError(SrlibError):
    """A score cache file is unreadable or not a cache; names the file."""


class ServerUnavailable(SrlibError, ConnectionError):
    """A model server did not answer after every retry; names its URL."""


def describe(error: BaseException) -> str:
    """One line for a user error: OSErrors as ``file: reason``, others by their message."""
    if isinstance(error, OSError) and error.filename and error.strerror:
        return f"{error.filename}: {error.strerror}"
    text = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
    return " ".join(text.split()) or type(error).__name__


class NotBuilt(SrlibError):
    """A report asked for a model or score the making stage never made: says which, and what
    makes it (a report reads; it never trains or scores)."""
