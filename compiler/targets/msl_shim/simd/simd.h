// tilec's MSL smoke check: <simd/simd.h>, whose vector types metal_stdlib already has.
#pragma once
#include <metal_stdlib>
