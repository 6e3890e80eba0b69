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
constexpr int kMaxDynamicSharedAttribute = 8;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES

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
};

template <typename F>
inline void bind(void *library, const char *name, F &slot) {
  slot = reinterpret_cast<F>(dlsym(library, name));
  if (!slot) throw std::runtime_error(std::string("libcuda.so.1 lacks ") + name);
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
