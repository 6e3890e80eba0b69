"""Layout pictures, as TileLang's `tilelang.tools.plot_layout` draws them, from tilec's layouts.

- A fragment (`#tile.linear` / `LinearLayout`, or a `T.Fragment`): one cell per element,
  coloured by the thread that holds it and labelled with thread and register (`T5 R3`); an
  element several threads hold (a reduction's broadcast) names the first and the count.
- A shared buffer (`#tile.swizzle`, the `tile.swizzle` decisions "128B" / "64B" / "32B" /
  "xor", or tilec.layout's `SwizzledLayout`): one cell per 16-byte chunk of each row, coloured
  by the 16-byte bank group its swizzled address falls in and labelled with the physical chunk,
  beside the bank conflicts of the tensor cores' read (ldmatrix / wgmma: 8 threads read the
  same chunk column of 8 consecutive rows, 16 bytes each): the wavefronts each such access
  takes, 1 when conflict-free.
- A `T.Layout`: each cell of the input grid labelled with its flattened output position.

`plot_layout(layout, path)` writes one file when `path` ends in .png, .svg or .pdf;
otherwise, as in TileLang, `path` is the directory and `name` + `formats` name the files.
Matplotlib draws (Agg backend, nothing is shown).
"""

from __future__ import annotations

import base64
import io
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tilec.language as T
from tilec.compiler.layouts.linear import LinearLayout
from tilec.compiler.layouts.shared import Swizzle
from tilec.errors import TilecError
from tilec.language import DTYPES
from tilec.language import dtype as tile_dtype
from tilec.layout import SwizzledLayout
from tilec.tools.trace import Decision

SUFFIXES = (".png", ".svg", ".pdf")
BANKS = 32
BANK_BYTES = 4
CHUNK_BYTES = 16
CHUNKS_PER_WAVEFRONT = BANKS * BANK_BYTES // CHUNK_BYTES  # 8 chunks of 16 bytes per 128 bytes
LABELLED_CELLS = 1024  # past this many cells the picture is colours only
SHOWN_ROWS = 32  # swizzles repeat within 8 rows: the first rows tell the pattern


@dataclass(frozen=True)
class FragmentMap:
    """Who holds each element: holders[(row, column)] = [(thread, register), ...]."""

    rows: int
    columns: int
    threads: int
    registers: int
    holders: dict[tuple[int, int], list[tuple[int, int]]]


@dataclass(frozen=True)
class SharedMap:
    """A shared tile's rows of 16-byte chunks: chunk[row][c] = the physical chunk (within its
    row's 128-byte span) that logical chunk c is stored in, and the wavefronts of each
    8-row column read."""

    name: str
    rows: int
    chunks_per_row: int
    element_bytes: int
    row_elements: int
    offsets: list[list[int]]  # byte offset of each (row, logical chunk)
    wavefronts: list[list[int]]  # [row group][chunk column]


# ----- models ------------------------------------------------------------------------------

def _as_2d(point: Sequence[int], shape: Sequence[int]) -> tuple[int, int]:
    """A coordinate of any rank as (row, column): leading dimensions flattened into rows."""
    if len(shape) == 1:
        return 0, point[0]
    row = 0
    for value, extent in zip(point[:-1], shape[:-1], strict=True):
        row = row * extent + value
    return row, point[-1]


def _rows_columns(shape: Sequence[int]) -> tuple[int, int]:
    if len(shape) == 1:
        return 1, shape[0]
    rows = 1
    for extent in shape[:-1]:
        rows *= extent
    return rows, shape[-1]


def fragment_map(layout: Any) -> FragmentMap:
    """The holders of every element of a fragment layout (LinearLayout, its text, T.Fragment)."""
    if isinstance(layout, str):
        layout = LinearLayout.parse(layout)
    holders: dict[tuple[int, int], list[tuple[int, int]]] = {}
    if isinstance(layout, LinearLayout):
        shape = layout.shape
        for register, thread in itertools.product(range(layout.num_registers),
                                                  range(layout.threads)):
            point = layout.apply(register, thread % layout.lanes, thread // layout.lanes)
            if layout.in_tile(point):
                holders.setdefault(_as_2d(point, shape), []).append((thread, register))
        threads, registers = layout.threads, layout.num_registers
    elif isinstance(layout, T.Fragment):
        shape = layout.shape
        for (register, thread), point in layout.holders().items():
            holders.setdefault(_as_2d(point, shape), []).append((thread, register))
        threads = max(t for cell in holders.values() for t, _ in cell) + 1
        registers = max(r for cell in holders.values() for _, r in cell) + 1
    else:
        raise TilecError(f"plot_layout: not a fragment layout: {type(layout).__name__}")
    for cell in holders.values():
        cell.sort()
    rows, columns = _rows_columns(shape)
    return FragmentMap(rows, columns, threads, registers, holders)


def _xor_swizzle_chunk(row: int, chunk: int, chunks_per_row: int) -> int:
    """The mma.sync tiles' "xor" swizzle (tilec.compiler.tensorcore.ampere's swizzle_xor):
    the 16-byte chunk index XORed with the row, so 8 consecutive rows hit 8 bank groups."""
    if chunks_per_row >= CHUNKS_PER_WAVEFRONT:
        return chunk ^ (row % CHUNKS_PER_WAVEFRONT)
    return chunk ^ ((row // (CHUNKS_PER_WAVEFRONT // chunks_per_row)) % chunks_per_row)


def wavefronts(offsets: Sequence[int], access_bytes: int = CHUNK_BYTES) -> int:
    """Shared-memory wavefronts of one warp-wide access, each thread reading `access_bytes`
    at its byte offset: threads are served in phases of 128 bytes, and within a phase a bank
    asked for several different 4-byte words serves them one after another."""
    per_phase = max(1, BANKS * BANK_BYTES // access_bytes)
    total = 0
    for start in range(0, len(offsets), per_phase):
        banks: dict[int, set[int]] = {}
        for offset in offsets[start:start + per_phase]:
            for word in range(offset // BANK_BYTES, (offset + access_bytes) // BANK_BYTES):
                banks.setdefault(word % BANKS, set()).add(word)
        total += max(len(words) for words in banks.values())
    return total


def shared_map(swizzle: Any, shape: Sequence[int], element_bytes: int) -> SharedMap:
    """Where each 16-byte chunk of a shared tile lies and how the tensor cores' reads fare."""
    rows, row_elements = _rows_columns(shape)
    row_bytes = row_elements * element_bytes
    if row_bytes % CHUNK_BYTES:
        raise TilecError(f"plot_layout: rows of {row_bytes} bytes are not whole 16-byte chunks")
    chunks = row_bytes // CHUNK_BYTES
    text = str(swizzle).strip().strip('"')
    if text == "xor":
        name = "xor (mma.sync)"

        def offset(row: int, chunk: int) -> int:
            return row * row_bytes + _xor_swizzle_chunk(row, chunk, chunks) * CHUNK_BYTES
    else:
        if isinstance(swizzle, Swizzle):
            model = swizzle
        elif text in ("128B", "64B", "32B", "none"):
            model = Swizzle(0 if text == "none" else int(text[:-1]))
        else:
            model = Swizzle.parse(text)
        name = str(model)

        def offset(row: int, chunk: int) -> int:
            column = chunk * CHUNK_BYTES // element_bytes
            return model.byte_offset(row, column, row_elements, element_bytes)
    offsets = [[offset(row, chunk) for chunk in range(chunks)] for row in range(rows)]
    groups = [[wavefronts([offsets[row][chunk]
                           for row in range(first, min(first + CHUNKS_PER_WAVEFRONT, rows))])
               for chunk in range(chunks)]
              for first in range(0, rows, CHUNKS_PER_WAVEFRONT)]
    return SharedMap(name, rows, chunks, element_bytes, row_elements, offsets, groups)


# ----- what a caller may pass ------------------------------------------------------------

MEMREF_TYPE = re.compile(r"memref<((?:\d+x)+)([A-Za-z]\w*)")


def _type_shape_and_bytes(text: str) -> tuple[tuple[int, ...], int]:
    """(shape, element bytes) of a buffer's memref type text (`memref<128x32xf16, ...>`)."""
    match = MEMREF_TYPE.search(text)
    found = next((d for d in DTYPES.values() if match and match[2] in (d.storage, d.mlir)), None)
    if found is None:
        raise TilecError(f"plot_layout: cannot read a static shape and dtype from {text!r}")
    return tuple(int(d) for d in match[1].split("x") if d), max(1, found.bits // 8)


def _element_bytes(dtype: Any) -> int:
    return max(1, tile_dtype(dtype).bits // 8)


def resolve(layout: Any, shape: Sequence[int] | None = None,
            dtype: Any = None) -> FragmentMap | SharedMap | Any:
    """What to draw: a FragmentMap, a SharedMap, or a T.Layout (drawn as an index map)."""
    if isinstance(layout, Decision):  # a buffer of a trace step
        for key in ("tile.layout", "tile.swizzle", "tile.swizzle_request"):
            if key in layout.attributes:
                value = layout.attributes[key]
                if value.startswith("#tile.linear"):
                    return fragment_map(value)
                found_shape, found_bytes = _type_shape_and_bytes(layout.type)
                return shared_map(value, found_shape, found_bytes)
        raise TilecError(f"plot_layout: buffer {layout.value} ({layout.type}) carries no "
                         "layout attribute")
    if isinstance(layout, (LinearLayout, T.Fragment)) or (
            isinstance(layout, str) and layout.startswith("#tile.linear")):
        return fragment_map(layout)
    if isinstance(layout, SwizzledLayout):
        return shared_map(layout.swizzle, layout.shape, _element_bytes(layout.dtype))
    if isinstance(layout, (Swizzle, str)):
        if shape is None or dtype is None:
            raise TilecError("plot_layout: a swizzle needs the buffer's shape= and dtype=")
        return shared_map(layout, tuple(shape), _element_bytes(dtype))
    if isinstance(layout, T.Layout):
        return layout
    raise TilecError(f"plot_layout: cannot draw a {type(layout).__name__} (give a "
                     "#tile.linear / #tile.swizzle layout, a T.Fragment, a T.Layout, "
                     "a tilec.layout swizzle or a trace buffer)")


# ----- drawing -----------------------------------------------------------------------------

def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise TilecError("plot_layout draws with matplotlib: pip install matplotlib") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _cell_size(rows: int, columns: int) -> float:
    return max(0.12, min(0.6, 14.0 / max(rows, columns)))


def _draw_fragment(plt: Any, found: FragmentMap, colormap: str | None) -> Any:
    import numpy as np

    threads = np.full((found.rows, found.columns), np.nan)
    for (row, column), cell in found.holders.items():
        threads[row, column] = cell[0][0]
    size = _cell_size(found.rows, found.columns)
    figure, axes = plt.subplots(figsize=(max(3.0, found.columns * size + 1.5),
                                         max(2.0, found.rows * size + 1.0)))
    image = axes.imshow(threads, cmap=colormap or "RdPu", vmin=0,
                        vmax=max(found.threads - 1, 1), interpolation="nearest")
    if found.rows * found.columns <= LABELLED_CELLS:
        for (row, column), cell in found.holders.items():
            thread, register = cell[0]
            extra = f"\n+{len(cell) - 1}" if len(cell) > 1 else ""
            shade = threads[row, column] / max(found.threads - 1, 1)
            axes.text(column, row, f"T{thread}\nR{register}{extra}", ha="center",
                      va="center", fontsize=6, color="white" if shade > 0.55 else "black")
    copies = max(len(cell) for cell in found.holders.values())
    axes.set_title(f"fragment {found.rows}x{found.columns}: {found.threads} threads x "
                   f"{found.registers} registers" + (f", {copies} copies" if copies > 1 else ""),
                   fontsize=9)
    axes.set_xlabel("column")
    axes.set_ylabel("row")
    figure.colorbar(image, ax=axes, label="thread", fraction=0.04)
    return figure


def _draw_shared(plt: Any, found: SharedMap, colormap: str | None) -> Any:
    import numpy as np

    shown = min(found.rows, SHOWN_ROWS)
    groups = np.array([[(offset // CHUNK_BYTES) % CHUNKS_PER_WAVEFRONT for offset in row]
                       for row in found.offsets[:shown]])
    ways = np.array(found.wavefronts)
    figure, (left, right) = plt.subplots(
        1, 2, figsize=(max(6.0, found.chunks_per_row * 0.9 + 5), max(3.0, shown * 0.22 + 1.5)),
        gridspec_kw={"width_ratios": [max(found.chunks_per_row, 2), max(found.chunks_per_row,
                                                                        2)]})
    left.imshow(groups, cmap=colormap or "tab10", vmin=0, vmax=9, aspect="auto",
                interpolation="nearest")
    for row in range(shown):
        for chunk in range(found.chunks_per_row):
            left.text(chunk, row, str(groups[row, chunk]), ha="center", va="center", fontsize=6)
    elements = CHUNK_BYTES // found.element_bytes
    left.set_title(f"{found.name}: bank group (16 B) of each chunk\n{found.rows}x"
                   f"{found.row_elements} x {found.element_bytes} B"
                   + (f", rows 0-{shown - 1} shown" if shown < found.rows else ""), fontsize=8)
    left.set_xlabel(f"16-byte chunk of the row ({elements} elements)")
    left.set_ylabel("row")
    worst = int(ways.max())
    image = right.imshow(ways, cmap="Reds", vmin=1, vmax=max(worst, 2), aspect="auto",
                         interpolation="nearest")
    for group in range(ways.shape[0]):
        for chunk in range(ways.shape[1]):
            dark = ways[group, chunk] > max(worst, 2) * 0.6
            right.text(chunk, group, str(ways[group, chunk]), ha="center", va="center",
                       fontsize=7, color="white" if dark else "black")
    verdict = "conflict-free" if worst == 1 else f"up to {worst}-way bank conflicts"
    right.set_title(f"wavefronts of a 16 B read of one chunk column by 8 rows\n{verdict}",
                    fontsize=8)
    right.set_xlabel("chunk column")
    right.set_ylabel("group of 8 rows")
    figure.colorbar(image, ax=right, fraction=0.05)
    figure.tight_layout()
    return figure


def _draw_index_layout(plt: Any, layout: Any, colormap: str | None) -> Any:
    import numpy as np

    shape = layout.shape
    rows, columns = _rows_columns(shape)
    flat = np.zeros((rows, columns))
    labels = {}
    for point in itertools.product(*(range(extent) for extent in shape)):
        image = layout.forward_fn(*point)
        image = tuple(image) if isinstance(image, (list, tuple)) else (image,)
        position = 0
        for value, extent in zip(image, shape[-len(image):], strict=False):
            position = position * extent + int(value)
        cell = _as_2d(point, shape)
        flat[cell] = position
        labels[cell] = position
    size = _cell_size(rows, columns)
    figure, axes = plt.subplots(figsize=(max(3.0, columns * size + 1), max(2.0, rows * size + 1)))
    axes.imshow(flat, cmap=colormap or "Spectral", interpolation="nearest")
    if rows * columns <= LABELLED_CELLS:
        for (row, column), position in labels.items():
            axes.text(column, row, str(position), ha="center", va="center", fontsize=6)
    axes.set_title(f"layout {rows}x{columns}: output position of each input element",
                   fontsize=9)
    return figure


def figure(layout: Any, shape: Sequence[int] | None = None, dtype: Any = None,
           colormap: str | None = None) -> Any:
    """The matplotlib figure of a layout (see the module docstring for what it shows)."""
    plt = _pyplot()
    found = resolve(layout, shape, dtype)
    if isinstance(found, FragmentMap):
        return _draw_fragment(plt, found, colormap)
    if isinstance(found, SharedMap):
        return _draw_shared(plt, found, colormap)
    return _draw_index_layout(plt, found, colormap)


def _formats(formats: str | Sequence[str]) -> list[str]:
    if isinstance(formats, str):
        text = formats.strip().lower()
        names = ["pdf", "png", "svg"] if text == "all" else [f.strip() for f in text.split(",")]
    else:
        names = [str(f).lower() for f in formats]
    unknown = [f for f in names if f".{f}" not in SUFFIXES]
    if unknown:
        raise TilecError(f"plot_layout: formats are png, svg, pdf or all, not {unknown}")
    return names


def plot_layout(layout: Any, save_directory: str | Path = "./tmp", name: str = "layout",
                colormap: str | None = None, verbose: bool = False,
                formats: str | Sequence[str] = "pdf", *, shape: Sequence[int] | None = None,
                dtype: Any = None) -> list[Path]:
    """Draws `layout` and returns the files written. `save_directory` may be a file path
    ending in .png / .svg / .pdf; `shape` and `dtype` go with a bare swizzle."""
    target = Path(save_directory)
    if target.suffix.lower() in SUFFIXES:
        paths = [target]
    else:
        paths = [target / f"{name}.{suffix}" for suffix in _formats(formats)]
    drawn = figure(layout, shape, dtype, colormap)
    plt = _pyplot()
    try:
        for path in paths:
            path.parent.mkdir(parents=True, exist_ok=True)
            drawn.savefig(path, bbox_inches="tight", dpi=150)
            if verbose:
                print(f"plot_layout: saved {path}")
    finally:
        plt.close(drawn)
    return paths


def data_uri(layout: Any, dpi: int = 72) -> str:
    """The layout's picture as a PNG data: URI (the trace page embeds it)."""
    drawn = figure(layout)
    buffer = io.BytesIO()
    try:
        drawn.savefig(buffer, format="png", bbox_inches="tight", dpi=dpi)
    finally:
        _pyplot().close(drawn)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()
