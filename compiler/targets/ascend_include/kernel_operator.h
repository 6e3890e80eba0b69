// The AscendC declarations tilec's ascend target emits against, for a host C++ compiler.
//
// Written by tilec from the public AscendC API documentation (the names, argument orders and
// parameter structs of the calls the emitter uses), with no bodies: compiling an emitted kernel
// against it (`c++ -std=c++17 -fsyntax-only -I compiler/targets/ascend_include`) checks the
// kernel's syntax and types. It is not CANN's kernel_operator.h and nothing here runs: with the
// Ascend toolchain, the emitted source compiles against the real header instead.
#pragma once

#include <cstdint>

#define __global__
#define __aicore__
#define __gm__
using GM_ADDR = __gm__ uint8_t *;

// the 16-bit float types of the vector and cube units
struct half {
  half() = default;
  half(float value);
  operator float() const;
  uint16_t bits;
};
struct bfloat16_t {
  bfloat16_t() = default;
  bfloat16_t(float value);
  operator float() const;
  uint16_t bits;
};

namespace AscendC {

// where a buffer lives: GM (global), L1 (A1/B1), L0A (A2), L0B (B2), L0C (CO1), UB (VEC*)
enum class TPosition : int { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC };
using QuePosition = TPosition;

// the hardware pipes events order: scalar, vector, cube, and the memory transfer engines
enum class HardEvent : int { MTE2_V, V_MTE2, MTE2_MTE3, MTE3_MTE2, MTE3_V, V_MTE3, MTE2_S, S_MTE2,
                             MTE3_S, S_MTE3, V_S, S_V, MTE2_MTE1, MTE1_M, M_FIX, FIX_S, FIX_MTE2 };
enum pipe_t : int { PIPE_S, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_FIX, PIPE_ALL };
using event_t = int32_t;
constexpr event_t EVENT_ID0 = 0;

enum class RoundMode : int { CAST_NONE, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC };

int64_t GetBlockIdx();
int64_t GetBlockNum();

template <typename T>
class GlobalTensor {
 public:
  void SetGlobalBuffer(__gm__ T *buffer, uint64_t bufferSize);
  GlobalTensor operator[](uint64_t offset) const;
  T GetValue(uint64_t offset) const;
  void SetValue(uint64_t offset, T value);
};

template <typename T>
class LocalTensor {
 public:
  LocalTensor operator[](uint32_t offset) const;
  T GetValue(uint32_t offset) const;
  void SetValue(uint32_t offset, T value) const;
  uint32_t GetSize() const;
};

template <TPosition position, int32_t depth>
class TQue {
 public:
  template <typename T>
  LocalTensor<T> AllocTensor();
  template <typename T>
  void EnQue(const LocalTensor<T> &tensor);
  template <typename T>
  LocalTensor<T> DeQue();
  template <typename T>
  void FreeTensor(LocalTensor<T> &tensor);
};

template <TPosition position>
class TBuf {
 public:
  template <typename T>
  LocalTensor<T> Get();
};

class TPipe {
 public:
  template <TPosition position, int32_t depth>
  void InitBuffer(TQue<position, depth> &queue, uint8_t count, uint32_t bytes);
  template <TPosition position>
  void InitBuffer(TBuf<position> &buffer, uint32_t bytes);
};

template <HardEvent event>
void SetFlag(event_t id);
template <HardEvent event>
void WaitFlag(event_t id);
template <pipe_t pipe>
void PipeBarrier();

// DataCopy between GM and UB: contiguous elements, or blockCount rows of blockLen 32-byte
// blocks with srcStride / dstStride blocks between rows
struct DataCopyParams {
  uint16_t blockCount = 1;
  uint16_t blockLen = 0;
  uint16_t srcStride = 0;
  uint16_t dstStride = 0;
};
// DataCopyPad: blockCount rows of blockLen bytes (any length, not only whole 32-byte blocks),
// with srcStride / dstStride between rows
struct DataCopyExtParams {
  uint16_t blockCount = 1;
  uint32_t blockLen = 0;
  uint32_t srcStride = 0;
  uint32_t dstStride = 0;
  uint32_t rsv = 0;
};
// MTE3's copies into GM after SetAtomicAdd<T>() add to what is there (atomically across AI
// cores) until SetAtomicNone()
template <typename T>
void SetAtomicAdd();
void SetAtomicNone();
// GM (row-major ND) to L1 in the cube's fractal NZ layout
struct Nd2NzParams {
  uint16_t ndNum = 1;
  uint16_t nValue = 0;
  uint16_t dValue = 0;
  uint16_t srcNdMatrixStride = 0;
  uint16_t srcDValue = 0;
  uint16_t dstNzC0Stride = 0;
  uint16_t dstNzNStride = 1;
  uint16_t dstNzMatrixStride = 0;
};
template <typename T>
void DataCopy(const LocalTensor<T> &dst, const GlobalTensor<T> &src, uint32_t count);
template <typename T>
void DataCopy(const GlobalTensor<T> &dst, const LocalTensor<T> &src, uint32_t count);
template <typename T>
void DataCopy(const LocalTensor<T> &dst, const GlobalTensor<T> &src,
              const DataCopyParams &params);
template <typename T>
void DataCopy(const GlobalTensor<T> &dst, const LocalTensor<T> &src,
              const DataCopyParams &params);
template <typename T>
void DataCopy(const LocalTensor<T> &dst, const GlobalTensor<T> &src, const Nd2NzParams &params);
template <typename T>
void DataCopy(const LocalTensor<T> &dst, const LocalTensor<T> &src, uint32_t count);
template <typename T>
void DataCopyPad(const GlobalTensor<T> &dst, const LocalTensor<T> &src,
                 const DataCopyExtParams &params);

// L1 to L0A / L0B, 512-byte fractals
struct LoadData2DParams {
  uint16_t startIndex = 0;
  uint8_t repeatTimes = 0;
  uint16_t srcStride = 0;
  uint8_t sid = 0;
  uint16_t dstGap = 0;
  bool ifTranspose = false;
  uint8_t addrMode = 0;
};
template <typename T>
void LoadData(const LocalTensor<T> &dst, const LocalTensor<T> &src,
              const LoadData2DParams &params);

// the cube: L0C (+)= L0A x L0B
struct MmadParams {
  uint16_t m = 0;
  uint16_t n = 0;
  uint16_t k = 0;
  bool cmatrixInitVal = true;  // true: L0C = A x B; false: L0C += A x B
};
template <typename C, typename A, typename B>
void Mmad(const LocalTensor<C> &dst, const LocalTensor<A> &fm, const LocalTensor<B> &filter,
          const MmadParams &params);

// L0C to GM, row-major
struct FixpipeParamsV220 {
  uint16_t nSize = 0;
  uint16_t mSize = 0;
  uint16_t srcStride = 0;
  uint32_t dstStride = 0;
};
template <typename Dst, typename Src>
void Fixpipe(const GlobalTensor<Dst> &dst, const LocalTensor<Src> &src,
             const FixpipeParamsV220 &params);

// the vector unit on UB tensors, `count` elements
template <typename T>
void Add(const LocalTensor<T> &dst, const LocalTensor<T> &a, const LocalTensor<T> &b,
         int32_t count);
template <typename T>
void Sub(const LocalTensor<T> &dst, const LocalTensor<T> &a, const LocalTensor<T> &b,
         int32_t count);
template <typename T>
void Mul(const LocalTensor<T> &dst, const LocalTensor<T> &a, const LocalTensor<T> &b,
         int32_t count);
template <typename T>
void Div(const LocalTensor<T> &dst, const LocalTensor<T> &a, const LocalTensor<T> &b,
         int32_t count);
template <typename T>
void Max(const LocalTensor<T> &dst, const LocalTensor<T> &a, const LocalTensor<T> &b,
         int32_t count);
template <typename T>
void Min(const LocalTensor<T> &dst, const LocalTensor<T> &a, const LocalTensor<T> &b,
         int32_t count);
template <typename T>
void Adds(const LocalTensor<T> &dst, const LocalTensor<T> &src, T scalar, int32_t count);
template <typename T>
void Muls(const LocalTensor<T> &dst, const LocalTensor<T> &src, T scalar, int32_t count);
template <typename T>
void Maxs(const LocalTensor<T> &dst, const LocalTensor<T> &src, T scalar, int32_t count);
template <typename T>
void Mins(const LocalTensor<T> &dst, const LocalTensor<T> &src, T scalar, int32_t count);
template <typename T>
void Exp(const LocalTensor<T> &dst, const LocalTensor<T> &src, int32_t count);
template <typename T>
void Ln(const LocalTensor<T> &dst, const LocalTensor<T> &src, int32_t count);
template <typename T>
void Sqrt(const LocalTensor<T> &dst, const LocalTensor<T> &src, int32_t count);
template <typename T>
void Abs(const LocalTensor<T> &dst, const LocalTensor<T> &src, int32_t count);
template <typename T>
void Duplicate(const LocalTensor<T> &dst, T scalar, int32_t count);
template <typename Dst, typename Src>
void Cast(const LocalTensor<Dst> &dst, const LocalTensor<Src> &src, RoundMode mode,
          uint32_t count);
template <typename T>
void ReduceSum(const LocalTensor<T> &dst, const LocalTensor<T> &src, const LocalTensor<T> &work,
               int32_t count);
template <typename T>
void ReduceMax(const LocalTensor<T> &dst, const LocalTensor<T> &src, const LocalTensor<T> &work,
               int32_t count, bool calIndex = false);
template <typename T>
void ReduceMin(const LocalTensor<T> &dst, const LocalTensor<T> &src, const LocalTensor<T> &work,
               int32_t count, bool calIndex = false);

}  // namespace AscendC

// the scalar unit's math on one value (a T.Parallel the vector unit does not take runs there)
float expf(float x);
float logf(float x);
float sqrtf(float x);
float fabsf(float x);
float fmaxf(float a, float b);
float fminf(float a, float b);
