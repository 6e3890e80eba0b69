"""Errors a kernel author sees: each names the kernel's file and line and shows the source line."""

from __future__ import annotations

import contextlib
import contextvars
import linecache
from collections.abc import Iterator

# False while the command line calls the kernel (`tilec FILE.py --const ...`): its values come
# from no line of a Python file, so at_caller's errors name none
_CALLER_HAS_A_LINE = contextvars.ContextVar("tilec_caller_has_a_line", default=True)


class TilecError(Exception):
    """A problem in a tile program, reported at its place in the user's Python source."""

    def __init__(self, message: str, filename: str | None = None, lineno: int | None = None):
        self.message = message
        self.filename = filename
        self.lineno = lineno
        super().__init__(self._render())

    def _render(self) -> str:
        if self.filename is None or self.lineno is None:
            return self.message
        text = f"{self.filename}:{self.lineno}: {self.message}"
        source = linecache.getline(self.filename, self.lineno).rstrip()
        if source:
            text += f"\n    {source.strip()}"
        return text


class CompileError(TilecError):
    """The compiler rejected a kernel (a verifier or a lowering failed)."""


class LaunchError(TilecError):
    """A compiled kernel was called with arguments it cannot take."""


@contextlib.contextmanager
def called_from_the_command_line() -> Iterator[None]:
    """at_caller's errors inside carry no file:line (it would be the console script's)."""
    token = _CALLER_HAS_A_LINE.set(False)
    try:
        yield
    finally:
        _CALLER_HAS_A_LINE.reset(token)


def at_caller(message: str) -> TilecError:
    """A TilecError placed at the first frame outside tilec: the user's line that called the
    TileLang name which raised it."""
    import os
    import sys

    if not _CALLER_HAS_A_LINE.get():
        return TilecError(message)
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame = frame.f_back
    if frame is None:
        return TilecError(message)
    return TilecError(message, frame.f_code.co_filename, frame.f_lineno)


def check_options(api: str, options: dict, accepted: frozenset[str]) -> None:
    """`options` are keywords of TileLang's `api` that tilec takes without using them; any other
    keyword is an error at the caller's line (a misspelt option would otherwise be dropped
    without a word)."""
    unknown = sorted(set(options) - accepted)
    if unknown:
        unused = (f" (TileLang's options it accepts unused: {', '.join(sorted(accepted))})"
                  if accepted else "")
        raise at_caller(f"{api} got an unexpected keyword argument {unknown[0]!r}{unused}")
