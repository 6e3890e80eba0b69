// A kernel's launch through a one-node CUDA graph (opt-in: TILEC_GRAPH_LAUNCH=1).
//
// Why: replaying an instantiated graph costs the host less than cuLaunchKernel (on the H100
// of 2026-12-07, 1.16 µs against 2.67 µs per call, benchmarks/launch_floor.cu). Per stream the
// launch keeps a graph of one kernel node and its executable graph, made on the stream's first
// launch; a later launch sets the node's grid and arguments in the executable graph, only where
// they differ from that stream's last launch, and replays it.
//
// cuLaunchKernel runs instead where a graph launch would be wrong or cannot be had:
//  - the stream is capturing (torch.cuda.graph): the capture must record a kernel node, not a
//    child graph of a graph that the next call changes;
//  - the launch's table of streams is full (a new stream beyond kMaxStreams);
//  - a graph entry point failed once: the reason is kept (`reason()`) and every later launch
//    is cuLaunchKernel, whose own error, if any, is the one reported.
// A graph is made in the current context, the kernel's (the caller checks the device).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "cuda_driver.h"

namespace tilec_cuda {

class GraphLaunch {
 public:
  static constexpr int kMaxStreams = 8;
  static constexpr int kMaxArguments = 64;  // 8-byte argument values

  explicit GraphLaunch(bool wanted) : enabled_(wanted) {
    if (!wanted) {
      reason_ = "off";
    } else if (const char *missing = driver().graph_missing) {
      enabled_ = false;
      reason_ = std::string("off: the driver lacks ") + missing;
    }
  }
  GraphLaunch(const GraphLaunch &) = delete;
  GraphLaunch &operator=(const GraphLaunch &) = delete;

  ~GraphLaunch() {  // a graph still running is freed by the driver when it completes
    const Driver &d = driver();
    for (int i = 0; i < used_; ++i) {
      d.cuGraphExecDestroy(streams_[i].exec);
      d.cuGraphDestroy(streams_[i].graph);
    }
  }

  // Launches `function` with `count` 8-byte argument values; the driver's result.
  CUresult launch(CUfunction function, const unsigned grid[3], const unsigned block[3],
                  unsigned shared_bytes, CUstream stream, const uint64_t *values, int count) {
    void *slots[kMaxArguments];
    for (int i = 0; i < count; ++i) slots[i] = const_cast<uint64_t *>(&values[i]);
    const Driver &d = driver();
    if (enabled_ && count <= kMaxArguments) {
      int capturing = kStreamCaptureStatusNone;
      if (d.cuStreamIsCapturing(stream, &capturing) == 0 &&
          capturing == kStreamCaptureStatusNone) {
        KernelNodeParams params;
        params.func = function;
        params.gridDimX = grid[0], params.gridDimY = grid[1], params.gridDimZ = grid[2];
        params.blockDimX = block[0], params.blockDimY = block[1], params.blockDimZ = block[2];
        params.sharedMemBytes = shared_bytes;
        params.kernelParams = slots;
        if (replay(params, stream, values, count)) return 0;
      }
    }
    return d.cuLaunchKernel(function, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                            shared_bytes, stream, slots, nullptr);
  }

  // "on", "off", or "off: " and why the graph launch stopped.
  const std::string &reason() const { return reason_; }
  bool enabled() const { return enabled_; }
  int streams() const { return used_; }

 private:
  struct PerStream {
    CUstream stream = nullptr;
    CUgraph graph = nullptr;
    CUgraphNode node = nullptr;
    CUgraphExec exec = nullptr;
    unsigned grid[3] = {0, 0, 0};
    int count = 0;
    uint64_t values[kMaxArguments] = {};  // of the exec's kernel node
  };

  // The graph launch on `stream`; false where cuLaunchKernel must run instead.
  bool replay(const KernelNodeParams &params, CUstream stream, const uint64_t *values,
              int count) {
    const Driver &d = driver();
    PerStream *entry = nullptr;
    for (int i = 0; i < used_ && entry == nullptr; ++i)
      if (streams_[i].stream == stream) entry = &streams_[i];
    if (entry == nullptr) {
      if (used_ == kMaxStreams) return false;
      PerStream made;
      made.stream = stream;
      if (!succeeded(d.cuGraphCreate(&made.graph, 0), "cuGraphCreate")) return false;
      if (!succeeded(d.cuGraphAddKernelNode(&made.node, made.graph, nullptr, 0, &params),
                     "cuGraphAddKernelNode") ||
          !succeeded(d.cuGraphInstantiate(&made.exec, made.graph, 0), "cuGraphInstantiate")) {
        d.cuGraphDestroy(made.graph);
        return false;
      }
      entry = &streams_[used_++];
      *entry = made;
      remember(*entry, params, values, count);
    } else if (!same(*entry, params, values, count)) {
      if (!succeeded(d.cuGraphExecKernelNodeSetParams(entry->exec, entry->node, &params),
                     "cuGraphExecKernelNodeSetParams"))
        return false;
      remember(*entry, params, values, count);
    }
    return succeeded(d.cuGraphLaunch(entry->exec, stream), "cuGraphLaunch");
  }

  static bool same(const PerStream &entry, const KernelNodeParams &params,
                   const uint64_t *values, int count) {
    return entry.count == count && entry.grid[0] == params.gridDimX &&
           entry.grid[1] == params.gridDimY && entry.grid[2] == params.gridDimZ &&
           std::memcmp(entry.values, values, sizeof(uint64_t) * count) == 0;
  }

  static void remember(PerStream &entry, const KernelNodeParams &params,
                       const uint64_t *values, int count) {
    entry.grid[0] = params.gridDimX, entry.grid[1] = params.gridDimY;
    entry.grid[2] = params.gridDimZ;
    entry.count = count;
    std::memcpy(entry.values, values, sizeof(uint64_t) * count);
  }

  // False after turning the graph launch off with the failed call's name and error.
  bool succeeded(CUresult result, const char *what) {
    if (result == 0) return true;
    const char *message = "unknown error";
    driver().cuGetErrorString(result, &message);
    enabled_ = false;
    reason_ = std::string("off: ") + what + " failed: " + message + " (CUresult " +
              std::to_string(result) + "); cuLaunchKernel from then on";
    return false;
  }

  bool enabled_;
  std::string reason_ = "on";
  int used_ = 0;
  PerStream streams_[kMaxStreams];
};

}  // namespace tilec_cuda
