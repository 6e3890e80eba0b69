// The CUDA target's tile-schedule stage: canonicalize, cse, the module's tile.arch and its
// default settings (table loads, register-A K steps, async gathers, shared store runs, private
// ring tiles and, on sm_90+, the epilogue preload), then the six scheduling passes in order,
// each adding its decisions as tile.* attributes; tile-cuda then lowers the quickstart from them.
// RUN: tilec %examples/quickstart.py --target cuda:sm_90a --const M=512 --const N=384 --const K=256 --emit tile-schedule | FileCheck %s --check-prefix=SM90
// RUN: tilec %examples/quickstart.py --target cuda:sm_80 --const M=512 --const N=384 --const K=256 --emit tile-schedule | FileCheck %s --check-prefix=SM80
// RUN: tilec %examples/quickstart.py --target cuda:sm_90a --const M=512 --const N=384 --const K=256 --emit tile-cuda --print-ir-after-all 2>&1 >/dev/null | FileCheck %s --check-prefix=DUMPS

// SM90: module attributes {tile.arch = "sm_90a", tile.async_gathers, tile.drained_checks, tile.epilogue_preload = 1 : i64, tile.pipeline_table_loads, tile.register_a_steps, tile.ring_private_tiles, tile.shared_store_runs}
// SM90: tile.kernel {{.*}} attributes {tile.raster = {group_m = 8 : i64, persistent = true}, tile.warp_specialize = {consumer_warpgroups = 1 : i64, producer_warpgroups = 1 : i64, threads = 256 : i64}}
// SM90: tile.pipelined {{.*}} attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "tma-mbarrier", stages = 4 : i64}}
// SM90: tile.copy {{.*}} {tile.async = "tma"}
// SM90: tile.copy {{.*}} {tile.async = "tma"}
// SM90: tile.gemm {{.*}}tile.mma = {a_source = "shared", instr = array<i64: 64, 128, 16>, kind = "wgmma", warpgroups = 1 : i64}
// SM90: tile.copy {{.*}} {tile.store = {columns = 128 : i64, kind = "tma", swizzle = "128B"}}

// SM80: module attributes {tile.arch = "sm_80", tile.async_gathers, tile.drained_checks, tile.pipeline_table_loads, tile.register_a_steps, tile.ring_private_tiles, tile.shared_store_runs}
// SM80: tile.kernel {{.*}} attributes {tile.raster = {group_m = 8 : i64, persistent = false}}
// SM80: tile.pipelined {{.*}} attributes {tile.pipeline = {k_tile = 32 : i64, mechanism = "cp.async", stages = 3 : i64}}
// SM80: tile.gemm {{.*}}kind = "mma.sync", warps = array<i64: 2, 2>
// SM80: tile.copy {{.*}} {tile.store = {kind = "shared-staged", vector_bytes = 16 : i64}}

// DUMPS: IR Dump After canonicalize
// DUMPS: IR Dump After infer-mma-layout
// DUMPS: IR Dump After select-shared-swizzle
// DUMPS: IR Dump After select-epilogue-store
// DUMPS: IR Dump After pipeline-async-copies
// DUMPS: IR Dump After specialize-warps
// DUMPS: IR Dump After rasterize-blocks
// DUMPS: IR Dump After lower-gemm-to-tensorcore
// DUMPS-NOT: IR Dump After infer-fragment-layout
