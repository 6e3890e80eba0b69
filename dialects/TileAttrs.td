// Layout attributes of the tile dialect (included by TileOps.td).
//
// A fragment's layout says which thread holds which element in which register; a shared
// buffer's says where each element sits in shared memory. Passes decide them
// (infer-fragment-layout, select-shared-swizzle) and the GPU lowering reads them.

include "mlir/IR/AttrTypeBase.td"

class Tile_Attr<string name, string attrMnemonic> : AttrDef<Tile_Dialect, name> {
  let mnemonic = attrMnemonic;
}

def Tile_LinearLayoutAttr : Tile_Attr<"LinearLayout", "linear"> {
  let summary = "a fragment layout: (register, lane, warp) bits to tile coordinates over GF(2)";
  let description = [{
    `#tile.linear<[E0, E1], register = [[..], ..], lane = [[..], ..], warp = [[..], ..]>`:
    one basis vector (a coordinate per tile dimension) per bit of the register index, the
    lane and the warp. A position's coordinate is the XOR, per dimension, of the vectors of
    its set bits. Extents that are not powers of two are padded to the next one; positions
    that fall in the padding hold nothing. Zero vectors (or vectors repeating others) on
    lane/warp bits mean copies over those threads. Every element of the tile has a holder
    and no two registers of a thread hold the same element. The Python model is
    tilec.compiler.layouts.linear.LinearLayout.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        ArrayRefParameter<"int64_t">:$registerBases,
                        ArrayRefParameter<"int64_t">:$laneBases,
                        ArrayRefParameter<"int64_t">:$warpBases);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Registers, lanes and warps the layout spans (2^bits each).
    int64_t getNumRegisters() const { return int64_t(1) << (getRegisterBases().size() / getShape().size()); }
    int64_t getNumThreads() const {
      return int64_t(1) << ((getLaneBases().size() + getWarpBases().size()) / getShape().size());
    }
  }];
}

def Tile_SwizzleAttr : Tile_Attr<"Swizzle", "swizzle"> {
  let summary = "a shared-memory layout: rows XOR-swizzled in 16-byte chunks, or padded";
  let description = [{
    `#tile.swizzle<128B>` (also 64B, 32B): within each group of rows spanning the given
    bytes, the 16-byte chunk index of an element is XORed with its row's index modulo
    span / 16, the pattern of TMA's and wgmma's swizzle modes (CUTLASS Swizzle<3,4,3> for
    128B). `#tile.swizzle<none, pad = 8>`: rows are padded by that many elements instead.
    The Python model is tilec.compiler.layouts.shared.
  }];
  let parameters = (ins "int64_t":$bytes, "int64_t":$pad);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}
