"""Lets the generated `_tile_ops_gen.py` import MLIR's shared ODS helpers as a sibling."""

from mlir.dialects._ods_common import *  # noqa: F403
from mlir.dialects._ods_common import _cext  # noqa: F401
