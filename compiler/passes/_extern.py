"""The attribute names of T.call_extern's IR (python/tilec/frontend/extern_ops.py writes it,
the CUDA target compiles and links what it names: compiler/targets/cuda_extern.py)."""

EXTERN_ATTR = "tile.extern"  # on an llvm.func declaration: {name, args, result} of the C shim
SOURCES_ATTR = "tile.extern_sources"  # on the module: the T.import_source texts
IKET_EVENT_ATTR = "tile.iket_event"  # on the llvm.call of an IKET event: the event's name
