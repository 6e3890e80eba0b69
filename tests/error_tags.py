"""Errors expected at tagged lines: a test file marks the line a kernel mistake stands on with
`# error: TAG`, and the bad-input suites check that tilec's error names that file and line."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from tilec.errors import TilecError


@functools.cache
def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def line_of(path: Path, tag: str) -> int:
    """The one line of `path` carrying `# error: tag`."""
    pattern = re.compile(rf"#\s*error:\s*{re.escape(tag)}(\s|$)")
    matches = [n for n, text in enumerate(_lines(path), start=1) if pattern.search(text)]
    assert len(matches) == 1, f"tag {tag} is on lines {matches}"
    return matches[0]


def check_error(error: TilecError, path: Path, tag: str, *fragments: str,
                kind: type[TilecError] | None = None) -> None:
    """`error` is a TilecError (exactly `kind` where given) at the tagged line of `path`, says
    every fragment and begins with its file:line."""
    if kind is None:
        assert isinstance(error, TilecError), f"{type(error).__name__}: {error}"
    else:
        assert type(error) is kind, f"{type(error).__name__} instead of {kind.__name__}: {error}"
    assert error.filename is not None and Path(error.filename).resolve() == path, str(error)
    assert error.lineno == line_of(path, tag), str(error)
    for fragment in fragments:
        assert fragment in error.message, f"{fragment!r} not in {error.message!r}"
    assert str(error).startswith(f"{error.filename}:{error.lineno}: "), str(error)
