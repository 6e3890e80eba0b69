// The tile dialect's C++ declarations (generated from TileOps.td).
#pragma once

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "TileOpsDialect.h.inc"
#define GET_ATTRDEF_CLASSES
#include "TileAttrs.h.inc"
#define GET_OP_CLASSES
#include "TileOps.h.inc"

namespace tilec::tile {
/// The scope a memref's memory space names: "global", "shared", "fragment", "local", "var".
llvm::StringRef scopeOf(mlir::MemRefType type);
/// The attribute name of a fragment's layout (on tile.alloc and tile.parallel).
inline constexpr llvm::StringLiteral kLayoutAttrName = "tile.layout";
} // namespace tilec::tile
