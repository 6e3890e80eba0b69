// A kernel's launch through a one-node CUDA graph (the default; TILEC_GRAPH_LAUNCH=0: off).
//
// Why: replaying an instantiated graph costs the host less than cuLaunchKernel (on the H100
// of 2026-12-07, 1.16 µs against 2.67 µs per call, benchmarks/launch_floor.cu). Per stream the
// launch keeps up to kGraphsPerStream graphs of one kernel node and their executable graphs,
// each made on the first launch with arguments that none holds: a launch whose grid and
// arguments one holds replays it as it is; past that count the stream's least recently used
// one gets the new grid and arguments (cuGraphExecKernelNodeSetParams), then is replayed.
//
// cuLaunchKernel runs instead where a graph launch would be wrong or cannot be had:
//  - the stream is capturing (torch.cuda.graph): the capture must record a kernel node, not a
//    child graph of a graph that the next call changes;
//  - a stream without a graph when the kernel's kMaxGraphs are made;
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
  static constexpr int kMaxGraphs = 16;       // executable graphs of one kernel, all streams
  static constexpr int kGraphsPerStream = 4;  // argument sets replayed without an update
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
      d.cuGraphExecDestroy(graphs_[i].exec);
      d.cuGraphDestroy(graphs_[i].graph);
    }
  }

  // Launches `function` with `count` (at most kMaxArguments) 8-byte argument values; the
  // driver's result.
  CUresult launch(CUfunction function, const unsigned grid[3], const unsigned block[3],
                  unsigned shared_bytes, CUstream stream, const uint64_t *values, int count) {
    if (count < 0 || count > kMaxArguments) return kInvalidValue;
    void *slots[kMaxArguments];
    for (int i = 0; i < count; ++i) slots[i] = const_cast<uint64_t *>(&values[i]);
    const Driver &d = driver();
    if (enabled_) {
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

 private:
  // One executable graph of the kernel node, for one stream, and the grid and arguments its
  // node holds.
  struct Graph {
    CUstream stream = nullptr;
    CUgraph graph = nullptr;
    CUgraphNode node = nullptr;
    CUgraphExec exec = nullptr;
    uint64_t last_use = 0;
    unsigned grid[3] = {0, 0, 0};
    int count = 0;
    uint64_t values[kMaxArguments] = {};
  };

  // The graph launch on `stream`; false where cuLaunchKernel must run instead. A graph of the
  // stream that holds these arguments is replayed as it is; else, while the stream has fewer
  // than kGraphsPerStream and the table has room, a new one is made (outputs that alternate
  // between a few blocks, as `x = kernel(a, b)` in a loop gives, then replay without an
  // update); else the stream's least recently used graph gets the new grid and arguments.
  bool replay(const KernelNodeParams &params, CUstream stream, const uint64_t *values,
              int count) {
    const Driver &d = driver();
    Graph *oldest = nullptr;
    int of_stream = 0;
    ++clock_;
    for (int i = 0; i < used_; ++i) {
      Graph &graph = graphs_[i];
      if (graph.stream != stream) continue;
      if (holds(graph, params, values, count)) {
        graph.last_use = clock_;
        return succeeded(d.cuGraphLaunch(graph.exec, stream), "cuGraphLaunch");
      }
      ++of_stream;
      if (oldest == nullptr || graph.last_use < oldest->last_use) oldest = &graph;
    }
    Graph *graph = oldest;
    if (of_stream < kGraphsPerStream && used_ < kMaxGraphs) {
      Graph made;
      made.stream = stream;
      if (!succeeded(d.cuGraphCreate(&made.graph, 0), "cuGraphCreate")) return false;
      if (!succeeded(d.cuGraphAddKernelNode(&made.node, made.graph, nullptr, 0, &params),
                     "cuGraphAddKernelNode") ||
          !succeeded(d.cuGraphInstantiate(&made.exec, made.graph, 0), "cuGraphInstantiate")) {
        d.cuGraphDestroy(made.graph);
        return false;
      }
      graph = &graphs_[used_++];
      *graph = made;
    } else if (graph == nullptr) {  // a new stream, the table full
      return false;
    } else if (!succeeded(d.cuGraphExecKernelNodeSetParams(graph->exec, graph->node, &params),
                          "cuGraphExecKernelNodeSetParams")) {
      return false;
    }
    graph->last_use = clock_;
    graph->grid[0] = params.gridDimX, graph->grid[1] = params.gridDimY;
    graph->grid[2] = params.gridDimZ;
    graph->count = count;
    std::memcpy(graph->values, values, sizeof(uint64_t) * count);
    return succeeded(d.cuGraphLaunch(graph->exec, stream), "cuGraphLaunch");
  }

  static bool holds(const Graph &graph, const KernelNodeParams &params, const uint64_t *values,
                    int count) {
    return graph.count == count && graph.grid[0] == params.gridDimX &&
           graph.grid[1] == params.gridDimY && graph.grid[2] == params.gridDimZ &&
           std::memcmp(graph.values, values, sizeof(uint64_t) * count) == 0;
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
  uint64_t clock_ = 0;  // launches so far, for the least recently used graph
  int used_ = 0;
  Graph graphs_[kMaxGraphs];
};

}  // namespace tilec_cuda
