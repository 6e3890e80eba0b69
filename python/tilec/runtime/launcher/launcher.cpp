// tilec's native CUDA launcher: cuLaunchKernel with an argument layout fixed at load time.
//
// The CUDA driver is opened at run time (cuda_driver.h), so the extension builds on any machine
// (no CUDA toolkit, no MLIR) and loads on one with an NVIDIA driver. A Kernel knows its slots (tensor pointers, scalars, dynamic
// dimensions) once; a call only writes the call's values into a fixed buffer and launches.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "cuda_driver.h"

namespace nb = nanobind;

namespace {

using namespace tilec_cuda;

// Makes the device's primary context current (the one torch uses) if none is.
void ensure_context(int device) {
  const Driver &d = driver();
  CUcontext current = nullptr;
  check(d.cuInit(0), "cuInit");
  check(d.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current) return;
  CUdevice handle = 0;
  check(d.cuDeviceGet(&handle, device), "cuDeviceGet");
  check(d.cuDevicePrimaryCtxRetain(&current, handle), "cuDevicePrimaryCtxRetain");
  check(d.cuCtxSetCurrent(current), "cuCtxSetCurrent");
}

// Slot kinds, as python/tilec/runtime/cuda.py numbers them.
enum SlotKind : int { kPointer = 0, kInt32 = 1, kInt64 = 2, kFloat32 = 3, kFloat64 = 4 };

class Kernel {
 public:
  Kernel(nb::bytes image, const std::string &entry, std::vector<int> kinds, int shared_bytes,
         std::vector<unsigned> block, int device)
      : kinds_(std::move(kinds)), shared_bytes_(shared_bytes), values_(kinds_.size()),
        pointers_(kinds_.size()) {
    if (block.size() != 3) throw std::invalid_argument("block must have 3 sizes");
    for (int i = 0; i < 3; ++i) block_[i] = block[i];
    ensure_context(device);
    const Driver &d = driver();
    image_.assign(image.c_str(), image.c_str() + image.size());
    image_.push_back('\0');  // PTX must end with a NUL; a cubin ignores it
    check(d.cuModuleLoadData(&module_, image_.data()), "cuModuleLoadData");
    check(d.cuModuleGetFunction(&function_, module_, entry.c_str()), "cuModuleGetFunction");
    if (shared_bytes_ > 0)  // static shared bytes count against the 48 KB default too
      check(d.cuFuncSetAttribute(function_, kMaxDynamicSharedAttribute, shared_bytes_),
            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
    for (size_t i = 0; i < values_.size(); ++i) pointers_[i] = &values_[i];
  }

  // The loaded function, for _launcher_torch's Call (which launches it itself).
  uintptr_t function() const { return reinterpret_cast<uintptr_t>(function_); }

  // values: one Python int/float per slot, in slot order; grid: blocks along x, y, z.
  void launch(const nb::list &values, unsigned gx, unsigned gy, unsigned gz,
              uintptr_t stream) {
    size_t count = nb::len(values);
    if (count != kinds_.size())
      throw std::invalid_argument("expected " + std::to_string(kinds_.size()) +
                                  " launch values, got " + std::to_string(count));
    for (size_t i = 0; i < count; ++i) {
      nb::handle item = values[i];
      uint64_t &slot = values_[i];
      switch (kinds_[i]) {
        case kInt32: {
          int32_t v = nb::cast<int32_t>(item);
          slot = 0;
          std::memcpy(&slot, &v, sizeof v);
          break;
        }
        case kFloat32: {
          float v = nb::cast<float>(item);
          slot = 0;
          std::memcpy(&slot, &v, sizeof v);
          break;
        }
        case kFloat64: {
          double v = nb::cast<double>(item);
          std::memcpy(&slot, &v, sizeof v);
          break;
        }
        default: {
          int64_t v = nb::cast<int64_t>(item);
          std::memcpy(&slot, &v, sizeof v);
        }
      }
    }
    if (gx == 0 || gy == 0 || gz == 0) return;  // an empty grid launches nothing
    check(driver().cuLaunchKernel(function_, gx, gy, gz, block_[0], block_[1], block_[2],
                                  shared_bytes_, reinterpret_cast<CUstream>(stream),
                                  pointers_.data(), nullptr),
          "cuLaunchKernel");
  }

 private:
  std::vector<int> kinds_;
  int shared_bytes_;
  unsigned block_[3] = {1, 1, 1};
  std::vector<uint64_t> values_;
  std::vector<void *> pointers_;
  std::vector<char> image_;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
};

}  // namespace

NB_MODULE(_launcher, m) {
  m.doc() = "cuLaunchKernel with a precomputed argument layout (tilec's CUDA runtime)";
  // kernels held by launchers that live until exit are not leaks worth a report
  nb::set_leak_warnings(false);
  nb::class_<Kernel>(m, "Kernel")
      .def(nb::init<nb::bytes, const std::string &, std::vector<int>, int,
                    std::vector<unsigned>, int>(),
           nb::arg("image"), nb::arg("entry"), nb::arg("kinds"), nb::arg("shared_bytes"),
           nb::arg("block"), nb::arg("device"))
      .def("launch", &Kernel::launch, nb::arg("values"), nb::arg("gx"), nb::arg("gy"),
           nb::arg("gz"), nb::arg("stream"))
      .def_prop_ro("function", &Kernel::function);
}
