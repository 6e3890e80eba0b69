// The `tile` dialect: tile programs as TileLang users write them.
//
// Buffers are builtin memrefs whose memory space names their scope:
//   (none) = global, "shared", "fragment" (distributed over the block's threads),
//   "local" (private to one thread), "var" (a scalar variable of one thread),
//   "barrier" (mbarriers in shared memory, made by tile.alloc_barrier only).
// Element reads and writes use memref.load / memref.store; scalar math uses arith/math.
// Passes attach layouts (fragment thread mapping, shared swizzle) and pipeline stages
// as attributes, so each optimization is a small IR change a lit test can pin down.

include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/LoopLikeInterface.td"

def Tile_Dialect : Dialect {
  let name = "tile";
  let cppNamespace = "::tilec::tile";
  let summary = "Tile programs: kernels, scoped buffers and block-level data movement and math";
  let useDefaultAttributePrinterParser = 1;
}

include "TileAttrs.td"

class Tile_Op<string mnemonic, list<Trait> traits = []> : Op<Tile_Dialect, mnemonic, traits>;

def Tile_YieldOp : Tile_Op<"yield", [Pure, Terminator,
    ParentOneOf<["KernelOp", "ParallelOp", "PipelinedOp", "ForOp", "WarpgroupsOp"]>]> {
  let summary = "ends the body of a tile region op";
  let assemblyFormat = "attr-dict";
}

def Tile_KernelOp : Tile_Op<"kernel", [SingleBlockImplicitTerminator<"YieldOp">,
    RecursiveMemoryEffects]> {
  let summary = "a grid of thread blocks running the body once per block";
  let description = [{
    `grid` gives the number of blocks along x, y, z (one to three values); the body's
    block arguments are the block indices, one per grid dimension. `threads` is the
    block size (x, y, z). Buffers allocated inside are private to a block.
  }];
  let arguments = (ins Variadic<Index>:$grid, DenseI64ArrayAttr:$threads);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "`grid` `(` $grid `)` `threads` $threads attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def Tile_AllocOp : Tile_Op<"alloc"> {
  let summary = "a buffer in the shared, fragment, local or var scope of the enclosing kernel";
  let description = [{
    A fragment may carry its layout as `tile.layout = #tile.linear<...>` (over the buffer's
    shape and the kernel's threads), a shared buffer its `#tile.swizzle<...>`.
  }];
  let results = (outs AnyStaticShapeMemRef:$buffer);
  let assemblyFormat = "attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

def Tile_CopyOp : Tile_Op<"copy", [AttrSizedOperandSegments]> {
  let summary = "copies a box of elements between two buffers of any scopes";
  let description = [{
    Reads the box of extents `src_shape` at corner `src_offsets` of `src` and writes it to
    the box of extents `dst_shape` at corner `dst_offsets` of `dst`. The two boxes hold the
    same elements once unit extents are dropped. Elements of a global box that fall outside
    the buffer are read as zero and are not written.
  }];
  let arguments = (ins AnyMemRef:$src, Variadic<Index>:$src_offsets, DenseI64ArrayAttr:$src_shape,
                       AnyMemRef:$dst, Variadic<Index>:$dst_offsets, DenseI64ArrayAttr:$dst_shape);
  let assemblyFormat = [{
    $src `[` $src_offsets `]` $src_shape `to` $dst `[` $dst_offsets `]` $dst_shape attr-dict
    `:` type($src) `to` type($dst)
  }];
  let hasVerifier = 1;
}

def Tile_GemmOp : Tile_Op<"gemm"> {
  let summary = "C += op(A) x op(B) on block-level buffers";
  let description = [{
    A is M x K (K x M when `transpose_a`), B is K x N (N x K when `transpose_b`), C is
    M x N. With `clear_accum` C is zeroed first. `policy` says how warps split the
    block's tile: "square", "full_row" or "full_col".
  }];
  let arguments = (ins AnyMemRef:$a, AnyMemRef:$b, AnyMemRef:$c,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_a,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_b,
                       DefaultValuedAttr<BoolAttr, "false">:$clear_accum,
                       DefaultValuedAttr<StrAttr, "\"square\"">:$policy);
  let assemblyFormat = "$a `,` $b `,` $c attr-dict `:` type($a) `,` type($b) `,` type($c)";
  let hasVerifier = 1;
}

def Tile_FillOp : Tile_Op<"fill"> {
  let summary = "sets every element of a block-level buffer to a value";
  let arguments = (ins AnyMemRef:$dst, AnyType:$value);
  let assemblyFormat = "$dst `,` $value attr-dict `:` type($dst) `,` type($value)";
  let hasVerifier = 1;
}

def Tile_ParallelOp : Tile_Op<"parallel", [SingleBlockImplicitTerminator<"YieldOp">,
    RecursiveMemoryEffects]> {
  let summary = "an N-d iteration space whose points are independent";
  let description = [{
    The body runs once for every point of `extents`; its block arguments are the point's
    indices. Points may run in any order and on any thread of the block.
  }];
  let arguments = (ins DenseI64ArrayAttr:$extents);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$extents attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def Tile_PipelinedOp : Tile_Op<"pipelined", [SingleBlockImplicitTerminator<"YieldOp">,
    RecursiveMemoryEffects]> {
  let summary = "a sequential loop whose copies and compute may overlap in num_stages stages";
  let description = [{
    Iterates its index from `lower` to `upper` by `step`. `num_stages` is the number of
    buffers in flight; `order`, `stage` and `group` optionally fix the schedule of the
    body's statements, as in TileLang.
  }];
  let arguments = (ins Index:$lower, Index:$upper, Index:$step, I64Attr:$num_stages,
                       OptionalAttr<DenseI64ArrayAttr>:$order,
                       OptionalAttr<DenseI64ArrayAttr>:$stage,
                       OptionalAttr<ArrayAttr>:$group);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $lower `to` $upper `step` $step `stages` $num_stages attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
}

def Tile_ForOp : Tile_Op<"for", [SingleBlockImplicitTerminator<"YieldOp">,
    RecursiveMemoryEffects]> {
  let summary = "a sequential loop (T.serial, range), fully unrolled with `unroll`";
  let arguments = (ins Index:$lower, Index:$upper, Index:$step, UnitAttr:$unroll);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$lower `to` $upper `step` $step attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def Tile_ReduceOp : Tile_Op<"reduce"> {
  let summary = "reduces a buffer along one dimension";
  let description = [{
    `kind` is one of "max", "min", "umax", "umin", "sum", "abssum", "absmax"; umax and
    umin compare integers as unsigned (memrefs' integers are signless: the frontend
    picks them for unsigned dtypes). `dst` has the shape of `src` without dimension
    `dim`. Without `clear` the result is combined with what `dst` holds.
  }];
  let arguments = (ins AnyMemRef:$src, AnyMemRef:$dst, StrAttr:$kind, I64Attr:$dim,
                       DefaultValuedAttr<BoolAttr, "true">:$clear);
  let assemblyFormat = "$kind $src `to` $dst `dim` $dim attr-dict `:` type($src) `to` type($dst)";
  let hasVerifier = 1;
}

def Tile_AtomicAddOp : Tile_Op<"atomic_add"> {
  let summary = "atomically adds a value to one element of a buffer";
  let arguments = (ins AnyMemRef:$dst, Variadic<Index>:$indices, AnyType:$value);
  let assemblyFormat = "$dst `[` $indices `]` `,` $value attr-dict `:` type($dst) `,` type($value)";
  let hasVerifier = 1;
}

def Tile_ConvertLayoutOp : Tile_Op<"convert_layout"> {
  let summary = "copies a fragment into a fragment of the same shape held in another layout";
  let description = [{
    The two fragments' tile.alloc ops carry different `tile.layout`s; the GPU lowering moves
    the elements between registers within a thread where the layouts allow it, else
    through shared memory. infer-fragment-layout inserts it where a fragment's producer and
    consumer need different layouts.
  }];
  let arguments = (ins AnyMemRef:$src, AnyMemRef:$dst);
  let assemblyFormat = "$src `to` $dst attr-dict `:` type($src) `to` type($dst)";
  let hasVerifier = 1;
}

// ----- mbarriers and warp specialization ------------------------------------------------
// A barrier buffer is memref<N x i64, "barrier">: N mbarriers in shared memory. An op names
// one of them as `%barriers[%i]`.

def Tile_BarrierBuffer : MemRefRankOf<[I64], [1]>;

def Tile_AllocBarrierOp : Tile_Op<"alloc_barrier"> {
  let summary = "mbarriers in shared memory, initialized with their arrive counts";
  let description = [{
    One mbarrier per entry of `arrive_counts`: its phase completes once that many arrivals
    have been made (and every transaction byte it expects has landed). They are initialized
    before any other statement of the block uses them, so the op stands directly in the
    kernel's body.
  }];
  let arguments = (ins DenseI64ArrayAttr:$arrive_counts);
  let results = (outs Tile_BarrierBuffer:$barriers);
  let assemblyFormat = "$arrive_counts attr-dict `:` type($barriers)";
  let hasVerifier = 1;
}

def Tile_MbarrierArriveOp : Tile_Op<"mbarrier_arrive"> {
  let summary = "every thread running it arrives once at one mbarrier";
  let arguments = (ins Tile_BarrierBuffer:$barriers, Index:$index);
  let assemblyFormat = "$barriers `[` $index `]` attr-dict `:` type($barriers)";
  let hasVerifier = 1;
}

def Tile_MbarrierExpectTxOp : Tile_Op<"mbarrier_expect_tx"> {
  let summary = "one thread adds `bytes` transaction bytes the mbarrier's phase waits for";
  let description = [{
    With `arrive`, that thread also arrives (mbarrier.arrive.expect_tx); without, it only
    raises the expected byte count (mbarrier.expect_tx). Run by the first thread of the
    threads reaching it, as TileLang does.
  }];
  let arguments = (ins Tile_BarrierBuffer:$barriers, Index:$index, I32:$bytes, UnitAttr:$arrive);
  let assemblyFormat = "$barriers `[` $index `]` `,` $bytes attr-dict `:` type($barriers)";
  let hasVerifier = 1;
}

def Tile_MbarrierWaitParityOp : Tile_Op<"mbarrier_wait_parity"> {
  let summary = "waits until the mbarrier's phase of the given parity has completed";
  let description = [{
    `parity` is 0 or 1 (only its lowest bit counts). A fresh barrier is in phase 0, so waiting
    for parity 1 returns at once: the phase before it counts as completed.
  }];
  let arguments = (ins Tile_BarrierBuffer:$barriers, Index:$index, I32:$parity);
  let assemblyFormat = "$barriers `[` $index `]` `,` $parity attr-dict `:` type($barriers)";
  let hasVerifier = 1;
}

def Tile_TmaCopyOp : Tile_Op<"tma_copy", [AttrSizedOperandSegments]> {
  let summary = "an asynchronous bulk copy of a global box into shared memory";
  let description = [{
    Like tile.copy from a global box to a shared one, but asynchronous: one thread of those
    reaching it issues the copy and raises the mbarrier's expected transaction bytes by the
    box's size; the data is there once a wait on that barrier's phase returns. Elements of
    the global box outside the tensor read as zero.
  }];
  let arguments = (ins AnyMemRef:$src, Variadic<Index>:$src_offsets, DenseI64ArrayAttr:$src_shape,
                       AnyMemRef:$dst, Variadic<Index>:$dst_offsets, DenseI64ArrayAttr:$dst_shape,
                       Tile_BarrierBuffer:$barriers, Index:$index);
  let assemblyFormat = [{
    $src `[` $src_offsets `]` $src_shape `to` $dst `[` $dst_offsets `]` $dst_shape
    `barrier` $barriers `[` $index `]` attr-dict `:` type($src) `to` type($dst) `,` type($barriers)
  }];
  let hasVerifier = 1;
}

def Tile_FenceProxyAsyncOp : Tile_Op<"fence_proxy_async"> {
  let summary = "orders this thread's shared-memory accesses with the async proxy's (TMA, wgmma)";
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def Tile_WarpgroupsOp : Tile_Op<"warpgroups", [SingleBlockImplicitTerminator<"YieldOp">,
    RecursiveMemoryEffects]> {
  let summary = "a body only the threads of the listed warpgroups run";
  let description = [{
    Warpgroup g is the threads 128 * g to 128 * g + 127 of the block (linear thread index).
    The body sees those threads as its block: barriers in it wait for them only.
  }];
  let arguments = (ins DenseI64ArrayAttr:$groups);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$groups attr-dict-with-keyword $body";
  let hasVerifier = 1;
}
