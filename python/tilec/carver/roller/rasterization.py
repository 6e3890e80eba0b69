"""The block order a hint asks for: TileLang's rasterization plans.

tilec's rasterize-blocks pass decides the order itself (grouped rows of tiles, `T.use_swizzle`
panel); a plan tells the kernel author whether grouping is worth asking for and its panel.
"""

from __future__ import annotations


class Rasterization:
    """A block order; `panel_width` rows (or columns) of tiles are walked together."""

    panel_width: int = 0

    def __repr__(self) -> str:
        return f"<{type(self).__name__}({self.panel_width})>"


class NoRasterization(Rasterization):
    """Row-major block order: the grid fits in one wave, so grouping buys no L2 reuse."""

    def __repr__(self) -> str:
        return "<NoRasterization>"


class Rasterization2DRow(Rasterization):
    """Rows of tiles walked in panels of `panel_width` (T.use_swizzle(panel_width))."""

    def __init__(self, panel_width: int = 8):
        self.panel_width = panel_width


class Rasterization2DColumn(Rasterization):
    """Columns of tiles walked in panels of `panel_width` (T.use_swizzle(panel, "column"))."""

    def __init__(self, panel_width: int = 8):
        self.panel_width = panel_width
