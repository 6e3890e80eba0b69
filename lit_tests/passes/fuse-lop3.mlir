// RUN: tilec-opt --fuse-lop3 --split-input-file %s | FileCheck %s

// The int4 decode's (word & 0x000F000F) | 0x64006400: one lop3 of the constant, the word and
// the mask, a | (b & c) = 0xF8 (a, b, c: 0xF0, 0xCC, 0xAA). A three-value tree (a ^ b) & ~c
// folds the -1 of its not into the table: 0x14. One op alone is left to ptxas.
// CHECK-LABEL: gpu.func @trees
// CHECK-DAG: %[[MASK:.*]] = arith.constant 983055 : i32
// CHECK-DAG: %[[BIAS:.*]] = arith.constant 1677747200 : i32
// CHECK: %[[D:.*]] = llvm.inline_asm "lop3.b32 $0, $1, $2, $3, 0xf8;", "=r,r,r,r" %[[BIAS]], %{{.*}}, %[[MASK]] : (i32, i32, i32) -> i32
// CHECK: memref.store %[[D]]
// CHECK: llvm.inline_asm "lop3.b32 $0, $1, $2, $3, 0x14;", "=r,r,r,r" %{{.*}}, %{{.*}}, %{{.*}} : (i32, i32, i32) -> i32
// CHECK: %[[ONE:.*]] = arith.andi
// CHECK: memref.store %[[ONE]]
// CHECK-NOT: arith.ori
// CHECK-NOT: arith.xori
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @trees(%w: i32, %a: i32, %b: i32, %c: i32, %out: memref<3xi32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %mask = arith.constant 983055 : i32
      %bias = arith.constant 1677747200 : i32
      %ones = arith.constant -1 : i32
      %m = arith.andi %w, %mask : i32
      %d = arith.ori %m, %bias : i32
      memref.store %d, %out[%c0] : memref<3xi32>
      %x = arith.xori %a, %b : i32
      %nc = arith.xori %c, %ones : i32
      %t = arith.andi %x, %nc : i32
      memref.store %t, %out[%c1] : memref<3xi32>
      %one = arith.andi %a, %mask : i32
      memref.store %one, %out[%c2] : memref<3xi32>
      gpu.return
    }
  }
}

// -----

// A value the tree's op shares with another user stays a leaf (computed once), a tree stops
// at three values (the fourth op's result is a leaf of the rest), and wider or vector
// integers are left alone.
// CHECK-LABEL: gpu.func @limits
// CHECK: %[[SHARED:.*]] = arith.andi %{{.*}}, %{{.*}} : i32
// CHECK: llvm.inline_asm "lop3.b32 $0, $1, $2, $3, 0x60;", "=r,r,r,r" %{{.*}}, %[[SHARED]], %{{.*}}
// CHECK: arith.ori %[[SHARED]]
// CHECK: %[[AB:.*]] = arith.andi %{{.*}}, %{{.*}} : i32
// CHECK: %[[CD:.*]] = arith.ori %{{.*}}, %{{.*}} : i32
// CHECK: llvm.inline_asm "lop3.b32 $0, $1, $2, $3, 0x60;", "=r,r,r,r" %{{.*}}, %[[AB]], %[[CD]]
// CHECK: arith.andi %{{.*}}, %{{.*}} : i64
// CHECK: arith.ori %{{.*}}, %{{.*}} : i64
// CHECK: arith.andi %{{.*}}, %{{.*}} : vector<2xi32>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @limits(%a: i32, %b: i32, %c: i32, %d: i32, %e: i32, %x: i64, %y: i64, %v: vector<2xi32>, %out: memref<4xi32>, %wide: memref<1xi64>, %vec: memref<1xvector<2xi32>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %s = arith.andi %a, %b : i32
      %t = arith.xori %s, %c : i32
      %u = arith.andi %t, %d : i32
      memref.store %u, %out[%c0] : memref<4xi32>
      %again = arith.ori %s, %e : i32
      memref.store %again, %out[%c1] : memref<4xi32>
      %p = arith.andi %a, %b : i32
      %q = arith.ori %c, %d : i32
      %r = arith.xori %p, %q : i32
      %z = arith.andi %r, %e : i32
      memref.store %z, %out[%c2] : memref<4xi32>
      %xy = arith.andi %x, %y : i64
      %xyz = arith.ori %xy, %x : i64
      memref.store %xyz, %wide[%c0] : memref<1xi64>
      %vv = arith.andi %v, %v : vector<2xi32>
      %vw = arith.ori %vv, %v : vector<2xi32>
      memref.store %vw, %vec[%c0] : memref<1xvector<2xi32>>
      gpu.return
    }
  }
}

// -----

// The frontend masks a word in index (`word & 0x000F000F` of a T.uint32 and a Python int):
// the i32 cast of that index andi is absorbed, its word read as the i32 it was cast from and
// its mask truncated, since the low 32 bits of a bitwise result depend only on those of its
// operands.
// CHECK-LABEL: gpu.func @through_index
// CHECK: %[[MASK:.*]] = arith.constant 983055 : i32
// CHECK: llvm.inline_asm "lop3.b32 $0, $1, $2, $3, 0xf8;", "=r,r,r,r" %{{.*}}, %arg0, %[[MASK]]
// CHECK-NOT: arith.andi
// CHECK-NOT: arith.index_cast
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @through_index(%w: i32, %out: memref<1xi32>) kernel {
      %c0 = arith.constant 0 : index
      %mask = arith.constant 983055 : index
      %bias = arith.constant 1677747200 : i32
      %wide = arith.index_castui %w : i32 to index
      %m = arith.andi %wide, %mask : index
      %n = arith.index_cast %m : index to i32
      %d = arith.ori %n, %bias : i32
      memref.store %d, %out[%c0] : memref<1xi32>
      gpu.return
    }
  }
}

// -----

// lower-sub-byte-types' T.uint4 fields converted to float: extui(trunci(byte >> s to i4)) OR-ed
// into the bits of 2 ** 23. The zero-extension of the truncation is a mask, and the byte, from
// a private buffer at a constant index, is its word shifted down (byte 5: word 1 >> 8; its high
// nibble >> 12): one shift and one lop3 (a | (b & c) over the bias, the word, 15) each. A shift
// past what the word's bits give exactly (byte >> 6 to i4 needs bits 6..9, the byte has 6..7)
// takes the byte zero-extended; a truncation no bitwise op reads is left as it is.
// CHECK-LABEL: gpu.func @fields
// CHECK-DAG: %[[BIAS:.*]] = arith.constant 1258291200 : i32
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[BYTES:.*]] = vector.load %[[BUF:.*]][%[[C4]]] : memref<16xi8>, vector<4xi8>
// CHECK: %[[CAST:.*]] = vector.bitcast %[[BYTES]] : vector<4xi8> to vector<1xi32>
// CHECK: %[[WORD:.*]] = vector.extract %[[CAST]][0] : i32 from vector<1xi32>
// CHECK: %[[EIGHT:.*]] = arith.constant 8 : i32
// CHECK: %[[LOW:.*]] = arith.shrui %[[WORD]], %[[EIGHT]] : i32
// CHECK: %[[W2:.*]] = vector.extract %{{.*}}[0] : i32 from vector<1xi32>
// CHECK: %[[S8:.*]] = arith.constant 8 : i32
// CHECK: %[[B5:.*]] = arith.shrui %[[W2]], %[[S8]] : i32
// CHECK: %[[MASK:.*]] = arith.constant 15 : i32
// CHECK: llvm.inline_asm "lop3.b32 $0, $1, $2, $3, 0xf8;", "=r,r,r,r" %[[BIAS]], %[[LOW]], %[[MASK]]
// CHECK: %[[S4:.*]] = arith.constant 4 : i32
// CHECK: %[[HIGH:.*]] = arith.shrui %[[B5]], %[[S4]] : i32
// CHECK: llvm.inline_asm "lop3.b32 $0, $1, $2, $3, 0xf8;", "=r,r,r,r" %[[BIAS]], %[[HIGH]], %{{.*}}
// CHECK: %[[WIDE:.*]] = arith.extui %{{.*}} : i8 to i32
// CHECK: llvm.inline_asm "lop3.b32 $0, $1, $2, $3, 0xf8;", "=r,r,r,r" %[[BIAS]], %[[WIDE]], %{{.*}}
// CHECK: %[[T:.*]] = arith.trunci %{{.*}} : i8 to i4
// CHECK: arith.extui %[[T]] : i4 to i32
// CHECK-NOT: llvm.inline_asm
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @fields(%v: vector<16xi8>, %out: memref<4xi32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c5 = arith.constant 5 : index
      %four = arith.constant 4 : i8
      %six = arith.constant 6 : i8
      %bias = arith.constant 1258291200 : i32
      %buf = memref.alloca() {alignment = 16 : i64} : memref<16xi8>
      vector.store %v, %buf[%c0] : memref<16xi8>, vector<16xi8>
      %byte = memref.load %buf[%c5] : memref<16xi8>
      %low = arith.trunci %byte : i8 to i4
      %low32 = arith.extui %low : i4 to i32
      %a = arith.ori %low32, %bias : i32
      memref.store %a, %out[%c0] : memref<4xi32>
      %shifted = arith.shrui %byte, %four : i8
      %high = arith.trunci %shifted : i8 to i4
      %high32 = arith.extui %high : i4 to i32
      %b = arith.ori %high32, %bias : i32
      memref.store %b, %out[%c1] : memref<4xi32>
      %far = arith.shrui %byte, %six : i8
      %top = arith.trunci %far : i8 to i4
      %top32 = arith.extui %top : i4 to i32
      %c = arith.ori %top32, %bias : i32
      memref.store %c, %out[%c2] : memref<4xi32>
      %alone = arith.trunci %byte : i8 to i4
      %alone32 = arith.extui %alone : i4 to i32
      memref.store %alone32, %out[%c3] : memref<4xi32>
      gpu.return
    }
  }
}
