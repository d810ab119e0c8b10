"""The library's words in the command line's: phrases of :class:`privnoise.Session` messages that name its
parameters, rewritten into the options of ``privnoise release`` and ``privnoise sql``.

The library names parameters as Python does ("pass missing='drop' ... to Session", "Declare `keys` ..."); a user of
the command line typed options. :func:`cli_words` wraps the calls a command makes into the library and rewrites the
message of any privnoise error they raise with :data:`PHRASES` (the "`name` of `owner`" form of every other
parameter is rewritten by :func:`privnoise._cli.errors.cli_message`). This module imports no numpy.

>>> translate("`data` of `Session`: nonexist.csv is not a file.", keys="--keys A,B")
'DATA: nonexist.csv is not a file.'
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from ..exceptions import PrivnoiseError
from .errors import CliInputError

__all__ = ["PHRASES", "cli_words", "translate"]

#: (library phrase, command-line phrase); ``{keys}`` is the command's form of declared keys.
PHRASES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(a), b) for a, b in (
    (r"the session's policy is missing='error'; pass missing='drop' or a number to impute to Session\.",
     "--missing is error; give --missing drop (leave those rows out) or --missing NUMBER (impute it)."),
    (r"\(missing='error'; pass missing='drop' or a number to impute\)",
     "(--missing error; give --missing drop to leave those rows out, or --missing NUMBER to impute it)"),
    (r"\(missing='error'\)", "(--missing error)"),
    (r"Declare `keys` or give the session a δ > 0\.", "Declare the keys ({keys}) or give --delta D > 0."),
    (r"declare `keys`, or give the session \(or `delta`\) a δ > 0", "declare the keys ({keys}) or give --delta D > 0"),
    (r"declare the keys or use another accountant", "declare the keys ({keys}) or give --delta D > 0"),
    (r"build the session with privacy_unit=('[^']*')", r"give --unit \1"),
    (r"build the session with max_contributions=(\d+)", r"give --max-contributions \1"),
    (r"`data` of `Session`: ", "DATA: "),
    (r"`path` of `dask_parquet`: ", "DATA: "),
    (r"`(?:privacy_unit|unit)` of `Session` must be a column", "--unit must be a column"),
    (r"`max_contributions` of `Session` needs `privacy_unit`", "--max-contributions needs --unit"),
    (r"`key` of `group_by` must be a column", "--group-by must be a column"),
    (r"`where` of `Session` must be a column", "--where names a column that is not one"),
    (r"`column` of `Session` must be a column", "--column must be a column"),
    (r"Session\.clamped_count counts the values outside the bounds privately, at a cost",
     "--query clamped-count --bounds LO,HI --epsilon E counts the values outside them privately, at a cost"),
    (r"`epsilon` \(or `rho`\), or OPTIONS\(epsilon = \.\.\.\)", "--epsilon E, or OPTIONS(epsilon = ...)"),
))


def translate(message: str, *, keys: str) -> str:
    """``message`` with the library's phrases in the command line's words (``keys``: how the command declares
    keys, e.g. "--keys A,B")."""
    for pattern, replacement in PHRASES:
        message = pattern.sub(replacement.replace("{keys}", keys), message)
    return message


@contextmanager
def cli_words(*, keys: str = "--keys A,B,...") -> Iterator[None]:
    """Privnoise errors raised in the block, their messages in the command line's words (:func:`translate`)."""
    try:
        yield
    except PrivnoiseError as exc:
        text = translate(str(exc), keys=keys)
        if text == str(exc):
            raise
        try:
            translated = type(exc)(text)
        except TypeError:  # an error class whose constructor takes more than a message
            translated = CliInputError(text)
        raise translated from None
