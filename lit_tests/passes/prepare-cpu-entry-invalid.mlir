// RUN: not tilec-opt --prepare-cpu-entry %s --split-input-file 2>&1 | FileCheck %s
// The module must hold exactly one entry function.

// CHECK: error: expected one func.func with `tile.entry`, found 0
func.func @no_entry() {
  return
}

// -----

// CHECK: error: expected one func.func with `tile.entry`, found 2
func.func @first() attributes {tile.entry} {
  return
}
func.func @second() attributes {tile.entry} {
  return
}
