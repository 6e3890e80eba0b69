"""The trace page in a real headless Chromium: it opens, its script lists every pass, and the
diff of a named pass shows the ops that pass made.

Without a `chromium` on PATH the tests skip, unless TILEC_REQUIRE_BROWSER=1 (CI sets it after
installing Debian's chromium: there a missing browser is a failure, not a skip).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

import tilec
import tilec.language as T

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def _browser() -> str:
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("TILEC_REQUIRE_BROWSER") == "1":
        pytest.fail("TILEC_REQUIRE_BROWSER=1 but no chromium on PATH (apt-get install chromium)")
    pytest.skip("no chromium on PATH: the trace page's browser test needs Debian's chromium "
                "(apt-get install chromium); CI installs it")


@tilec.jit(target="cpu")
def row_scale(A, block=32):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float32)
    B = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(M, block), threads=32) as bx:
        tile = T.alloc_fragment((block, N), T.float32)
        T.copy(A[bx * block, 0], tile)
        for i, j in T.Parallel(block, N):
            tile[i, j] = tile[i, j] * 3.0
        T.copy(tile, B[bx * block, 0])
    return B


class _Page(HTMLParser):
    """What the rendered DOM shows: pass items, the view's attributes, added diff cells."""

    def __init__(self) -> None:
        super().__init__()
        self.passes: list[str] = []
        self.view: dict[str, str] = {}
        self.added: list[str] = []
        self._in_added = 0
        self._pass_name = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        classes = values.get("class", "").split()
        if tag == "li" and "pass" in classes:
            self.passes.append(values.get("data-name", ""))
        if tag == "main":
            self.view = values
        if tag == "td" and "add" in classes:
            self._in_added = 1
            self.added.append("")
        elif self._in_added:
            self._in_added += 1

    def handle_endtag(self, tag: str) -> None:
        if self._in_added:
            self._in_added -= 1

    def handle_data(self, data: str) -> None:
        if self._in_added:
            self.added[-1] += data


def _chromium(browser: str, profile: Path, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                           "--no-first-run", f"--user-data-dir={profile}", *arguments],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    browser = _browser()  # skip before compiling anything
    del browser
    folder = tmp_path_factory.mktemp("trace-page")
    trace = row_scale.compile(M=64, N=48).trace(folder / "trace.html")
    return folder / "trace.html", [step.name for step in trace.steps]


def test_page_opens_lists_every_pass_and_shows_a_named_diff(page: tuple[Path, list[str]],
                                                            tmp_path: Path) -> None:
    path, names = page
    result = _chromium(_browser(), tmp_path / "profile", "--dump-dom",
                       f"{path.as_uri()}#pass=lower-tile-ops-to-loops")
    assert result.returncode == 0, result.stderr[-2000:]
    dom = _Page()
    dom.feed(result.stdout)
    assert dom.passes == names  # the script ran and listed every pass in order
    assert dom.view.get("data-name") == "lower-tile-ops-to-loops"
    assert dom.view.get("data-view") == "diff"
    assert any("scf.for" in cell for cell in dom.added), dom.added[:5]
    assert not any("tile.parallel" in cell for cell in dom.added)


def test_page_screenshot(page: tuple[Path, list[str]], tmp_path: Path) -> None:
    path, _ = page
    shot = tmp_path / "trace.png"
    result = _chromium(_browser(), tmp_path / "profile", "--window-size=1600,1000",
                       f"--screenshot={shot}", f"{path.as_uri()}#pass=lower-tile-ops-to-loops")
    assert result.returncode == 0, result.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
