// RUN: tilec-opt --apply-fast-math --split-input-file %s | FileCheck %s

// apply-fast-math: floating-point arith and math ops, wherever they are nested, get the flags
// of --use_fast_math (contract, afn, arcp); integer ops carry no flags and stay as they are.

// CHECK-LABEL: func.func @softmax_body
// CHECK: tile.parallel
// CHECK: arith.subf %{{.*}}, %{{.*}} fastmath<arcp,contract,afn> : f32
// CHECK: math.exp %{{.*}} fastmath<arcp,contract,afn> : f32
// CHECK: arith.divf %{{.*}}, %{{.*}} fastmath<arcp,contract,afn> : f32
// CHECK: arith.addi %{{.*}}, %{{.*}} : index
// CHECK-NOT: fastmath
// CHECK: return
module {
  func.func @softmax_body(%x: memref<4x64xf32>) attributes {tile.entry} {
    %g = arith.constant 1 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
    %t = tile.alloc : memref<4x64xf32, "fragment">
    %m = tile.alloc : memref<4xf32, "fragment">
    %s = tile.alloc : memref<4xf32, "fragment">
    tile.parallel [4, 64] {
    ^bb0(%i: index, %j: index):
      %v = memref.load %t[%i, %j] : memref<4x64xf32, "fragment">
      %mx = memref.load %m[%i] : memref<4xf32, "fragment">
      %d = arith.subf %v, %mx : f32
      %e = math.exp %d : f32
      %sum = memref.load %s[%i] : memref<4xf32, "fragment">
      %q = arith.divf %e, %sum : f32
      %k = arith.addi %i, %j : index
      memref.store %q, %t[%i, %k] : memref<4x64xf32, "fragment">
    }
    }
    return
  }
}

// -----

// Flags an op already has are kept (and not repeated); the ones assuming no NaN or infinity are
// never added.
// CHECK-LABEL: func.func @kept_flags
// CHECK: arith.mulf %{{.*}}, %{{.*}} fastmath<nnan,arcp,contract,afn> : f16
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<arcp,contract,afn> : f16
// CHECK: math.sqrt %{{.*}} fastmath<arcp,contract,afn> : f16
module {
  func.func @kept_flags(%a: f16, %b: f16) -> f16 {
    %p = arith.mulf %a, %b fastmath<nnan> : f16
    %q = arith.addf %p, %b fastmath<contract> : f16
    %r = math.sqrt %q : f16
    return %r : f16
  }
}
