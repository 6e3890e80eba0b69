// RUN: tilec-opt --lower-float8-conversions --split-input-file %s | FileCheck %s

// sm_90a has float8 conversion instructions: f32 -> e4m3 pairs round to nearest-even and
// saturate (cvt.rn.satfinite), the first element in the low byte; e5m2 -> f32 goes through
// an exact f16 pair. A scalar conversion fills its pair with itself. E5M2 results that round
// past its largest finite value become inf (satfinite would stop at 57344).
// CHECK-LABEL: gpu.func @hardware
// CHECK: %[[X0:.*]] = vector.extract %{{.*}}[0] : f32 from vector<4xf32>
// CHECK: %[[X1:.*]] = vector.extract %{{.*}}[1] : f32 from vector<4xf32>
// CHECK: %[[PAIR:.*]] = nvvm.convert.f32x2.to.f8x2 %[[X1]], %[[X0]] {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK: arith.trunci %[[PAIR]] : i16 to i8
// CHECK: arith.shrui %[[PAIR]]
// CHECK: nvvm.convert.f32x2.to.f8x2
// CHECK: vector.from_elements %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf8E4M3FN>
// CHECK: nvvm.convert.f8x2.to.f16x2 %{{.*}} : vector<2xi8>(f8E5M2) -> vector<2xf16>
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: nvvm.convert.f32x2.to.f8x2 %[[Y:.*]], %[[Y]] {{.*}} : i16(f8E5M2)
// CHECK: %[[ABS:.*]] = math.absf %[[Y]] : f32
// CHECK: arith.cmpf oge, %[[ABS]], %{{.*}} : f32
// CHECK-NOT: arith.truncf %{{.*}} to f8
// CHECK-NOT: arith.extf %{{.*}} : f8
module attributes {tile.arch = "sm_90a", gpu.container_module} {
  gpu.module @kernels {
    gpu.func @hardware(%v: vector<4xf32>, %b: f8E5M2, %y: f32, %out: memref<4xf8E4M3FN>, %wide: memref<1xf32>, %narrow: memref<1xf8E5M2>) kernel {
      %c0 = arith.constant 0 : index
      %q = arith.truncf %v : vector<4xf32> to vector<4xf8E4M3FN>
      vector.store %q, %out[%c0] : memref<4xf8E4M3FN>, vector<4xf8E4M3FN>
      %x = arith.extf %b : f8E5M2 to f32
      memref.store %x, %wide[%c0] : memref<1xf32>
      %n = arith.truncf %y : f32 to f8E5M2
      memref.store %n, %narrow[%c0] : memref<1xf8E5M2>
      gpu.return
    }
  }
}

// -----

// sm_80 has none: the CPU target's integer rounding, and a widening table placed inside the
// gpu.module (where the kernel can reach it).
// CHECK-LABEL: gpu.module @kernels
// CHECK-NEXT: memref.global "private" constant @__tilec_f8e4m3fn_to_f32 : memref<256xf32>
// CHECK: gpu.func @software
// CHECK-NOT: nvvm.convert
// CHECK: memref.get_global @__tilec_f8e4m3fn_to_f32
// CHECK: arith.bitcast %{{.*}} : i8 to f8E4M3FN
module attributes {tile.arch = "sm_80", gpu.container_module} {
  gpu.module @kernels {
    gpu.func @software(%a: f8E4M3FN, %y: f32, %out: memref<1xf8E4M3FN>, %wide: memref<1xf32>) kernel {
      %c0 = arith.constant 0 : index
      %x = arith.extf %a : f8E4M3FN to f32
      memref.store %x, %wide[%c0] : memref<1xf32>
      %q = arith.truncf %y : f32 to f8E4M3FN
      memref.store %q, %out[%c0] : memref<1xf8E4M3FN>
      gpu.return
    }
  }
}
