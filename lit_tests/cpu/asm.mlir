// RUN: tilec-opt --run-target=cpu %s | FileCheck %s
// The last stage is host assembly (its object code is what the driver links into the .so).

// CHECK: .globl tilec_add_one
// CHECK: tilec_add_one:
// CHECK: ret
func.func @add_one(%x: memref<64xi32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [64] {
  ^bb0(%bx: index):
    tile.parallel [64] {
    ^bb1(%i: index):
      %v = memref.load %x[%i] : memref<64xi32>
      %one = arith.constant 1 : i32
      %r = arith.addi %v, %one : i32
      memref.store %r, %x[%i] : memref<64xi32>
    }
  }
  return
}
