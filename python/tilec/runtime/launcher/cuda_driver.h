// The CUDA driver entry points tilec's launchers call, opened with dlopen("libcuda.so.1") and
// declared here, so the launchers build on any machine (no CUDA toolkit) and load on one with
// an NVIDIA driver.
#pragma once

#include <dlfcn.h>

#include <stdexcept>
#include <string>

namespace tilec_cuda {

using CUresult = int;
using CUdevice = int;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUstream = void *;
using CUgraph = void *;
using CUgraphNode = void *;
using CUgraphExec = void *;
constexpr int kMaxDynamicSharedAttribute = 8;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
constexpr int kStreamCaptureStatusNone = 0;    // CU_STREAM_CAPTURE_STATUS_NONE
constexpr CUresult kInvalidValue = 1;          // CUDA_ERROR_INVALID_VALUE

// CUDA_KERNEL_NODE_PARAMS_v2 (cuda.h of CUDA 12.0 and later, as 13.0's declares it): the
// parameters of a graph's kernel node, taken by the _v2 entry points below.
struct KernelNodeParams {
  CUfunction func = nullptr;
  unsigned gridDimX = 1, gridDimY = 1, gridDimZ = 1;
  unsigned blockDimX = 1, blockDimY = 1, blockDimZ = 1;
  unsigned sharedMemBytes = 0;
  void **kernelParams = nullptr;
  void **extra = nullptr;
  void *kern = nullptr;      // CUkernel, read only where func is null
  CUcontext ctx = nullptr;   // ignored where func is set
};

struct Driver {
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuCtxGetCurrent)(CUcontext *) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice *, int) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice) = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule *, const void *) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *) = nullptr;
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char **) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void **, void **) = nullptr;
  // The one-node graph launch (graph_launch.h); null where the driver lacks one (before 12.0)
  CUresult (*cuStreamIsCapturing)(CUstream, int *) = nullptr;
  CUresult (*cuGraphCreate)(CUgraph *, unsigned) = nullptr;
  CUresult (*cuGraphAddKernelNode)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
                                   const KernelNodeParams *) = nullptr;
  CUresult (*cuGraphInstantiate)(CUgraphExec *, CUgraph, unsigned long long) = nullptr;
  CUresult (*cuGraphExecKernelNodeSetParams)(CUgraphExec, CUgraphNode,
                                             const KernelNodeParams *) = nullptr;
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream) = nullptr;
  CUresult (*cuGraphExecDestroy)(CUgraphExec) = nullptr;
  CUresult (*cuGraphDestroy)(CUgraph) = nullptr;
  const char *graph_missing = nullptr;  // the first graph entry point the driver lacks
};

template <typename F>
inline void bind(void *library, const char *name, F &slot) {
  slot = reinterpret_cast<F>(dlsym(library, name));
  if (!slot) throw std::runtime_error(std::string("libcuda.so.1 lacks ") + name);
}

// An entry point the launch can do without: its name goes to `missing` where it is absent.
template <typename F>
inline void bind_optional(void *library, const char *name, F &slot, const char *&missing) {
  slot = reinterpret_cast<F>(dlsym(library, name));
  if (!slot && !missing) missing = name;
}

inline const Driver &driver() {
  static Driver d = [] {
    Driver loaded;
    void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!library) throw std::runtime_error("cannot open libcuda.so.1 (no NVIDIA driver?)");
    bind(library, "cuInit", loaded.cuInit);
    bind(library, "cuCtxGetCurrent", loaded.cuCtxGetCurrent);
    bind(library, "cuCtxSetCurrent", loaded.cuCtxSetCurrent);
    bind(library, "cuDeviceGet", loaded.cuDeviceGet);
    bind(library, "cuDevicePrimaryCtxRetain", loaded.cuDevicePrimaryCtxRetain);
    bind(library, "cuModuleLoadData", loaded.cuModuleLoadData);
    bind(library, "cuModuleGetFunction", loaded.cuModuleGetFunction);
    bind(library, "cuFuncSetAttribute", loaded.cuFuncSetAttribute);
    bind(library, "cuGetErrorString", loaded.cuGetErrorString);
    bind(library, "cuLaunchKernel", loaded.cuLaunchKernel);
    // the exported names behind cuda.h's macros: its legacy-stream (not _ptsz) versions, as
    // for cuLaunchKernel, and the _v2 forms that take KernelNodeParams
    const char *&missing = loaded.graph_missing;
    bind_optional(library, "cuStreamIsCapturing", loaded.cuStreamIsCapturing, missing);
    bind_optional(library, "cuGraphCreate", loaded.cuGraphCreate, missing);
    bind_optional(library, "cuGraphAddKernelNode_v2", loaded.cuGraphAddKernelNode, missing);
    bind_optional(library, "cuGraphInstantiateWithFlags", loaded.cuGraphInstantiate, missing);
    bind_optional(library, "cuGraphExecKernelNodeSetParams_v2",
                  loaded.cuGraphExecKernelNodeSetParams, missing);
    bind_optional(library, "cuGraphLaunch", loaded.cuGraphLaunch, missing);
    bind_optional(library, "cuGraphExecDestroy", loaded.cuGraphExecDestroy, missing);
    bind_optional(library, "cuGraphDestroy", loaded.cuGraphDestroy, missing);
    return loaded;
  }();
  return d;
}

inline void check(CUresult result, const char *what) {
  if (result == 0) return;
  const char *message = "unknown error";
  driver().cuGetErrorString(result, &message);
  throw std::runtime_error(std::string(what) + " failed: " + message + " (CUresult " +
                           std::to_string(result) + ")");
}

}  // namespace tilec_cuda
