// The host's floor for launching a kernel, whatever makes the call: one process, an empty
// kernel of the shape of tilec's vector_add (three pointers and an int), launched through the
// driver API (cuLaunchKernel, arguments packed once), the runtime API (cudaLaunchKernel) and a
// CUDA graph of that one launch (cudaGraphLaunch; and with the kernel node's arguments set
// before each replay, the graph route to a call whose output changes each time). benchmarks/launch_overhead.py compiles and
// runs it and puts its numbers beside tilec's kernel call, Triton's and torch's.
//
//   nvcc -O2 -arch=sm_90 launch_floor.cu -o launch_floor && ./launch_floor [CALLS]
//
// cuLaunchKernel is the driver's own entry point, found through the runtime
// (cudaGetDriverEntryPointByVersion), as a launcher that opens libcuda at run time calls it:
// nothing links libcuda, so the program also builds where there is no driver.
//
// Host time per call, not the GPU's rate of retiring empty kernels: each round first holds the
// GPU with a spin kernel long enough for the whole round, then issues ROUND_CALLS launches
// behind it (far below the launch queue's depth, so no launch waits for the GPU), timing each
// call alone. Prints one JSON object: per path the median and 10th / 90th percentiles of the
// per-call times (µs) over CALLS calls after WARMUP_CALLS, and the median over rounds of each
// round's mean (launch_overhead.py's own method).
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr int ROUND_CALLS = 64;
constexpr int WARMUP_CALLS = 1000;
constexpr long long SPIN_NS_PER_CALL = 40'000;  // far beyond any launch's host time

__global__ void empty_kernel(const float*, const float*, float*, int) {}

__global__ void spin_kernel(long long ns) {
  long long start = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  for (long long now = start; now - start < ns;) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  }
}

void check_runtime(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::printf("{\"error\": \"%s: %s\"}\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

using LaunchKernel = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                  unsigned, unsigned, CUstream, void**, void**);

void check_driver(CUresult status, const char* what) {
  if (status != CUDA_SUCCESS) {
    std::printf("{\"error\": \"%s: CUresult %d\"}\n", what, static_cast<int>(status));
    std::exit(1);
  }
}

LaunchKernel driver_launch_kernel() {
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  check_runtime(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &entry, 12000,
                                                 cudaEnableDefault, &found),
                "cudaGetDriverEntryPointByVersion(cuLaunchKernel)");
  if (found != cudaDriverEntryPointSuccess || entry == nullptr) {
    std::printf("{\"error\": \"the driver has no cuLaunchKernel entry point\"}\n");
    std::exit(1);
  }
  return reinterpret_cast<LaunchKernel>(entry);
}

struct Figures {
  double median_us, p10_us, p90_us, round_mean_median_us;
};

double percentile(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  return values[static_cast<size_t>(fraction * (values.size() - 1))];
}

// Rounds of ROUND_CALLS launches behind a spin kernel on `stream`, until `calls` are timed.
Figures time_launches(const std::function<void()>& launch, cudaStream_t stream, int calls) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < WARMUP_CALLS; ++i) launch();
  check_runtime(cudaStreamSynchronize(stream), "warm-up");
  std::vector<double> per_call, round_means;
  per_call.reserve(calls);
  while (static_cast<int>(per_call.size()) < calls) {
    spin_kernel<<<1, 1, 0, stream>>>(SPIN_NS_PER_CALL * ROUND_CALLS);
    double round_total = 0.0;
    for (int i = 0; i < ROUND_CALLS; ++i) {
      auto began = clock::now();
      launch();
      double us = std::chrono::duration<double, std::micro>(clock::now() - began).count();
      per_call.push_back(us);
      round_total += us;
    }
    round_means.push_back(round_total / ROUND_CALLS);
    check_runtime(cudaStreamSynchronize(stream), "round");
  }
  return {percentile(per_call, 0.5), percentile(per_call, 0.1), percentile(per_call, 0.9),
          percentile(round_means, 0.5)};
}

std::string as_json(const char* name, const Figures& f) {
  char text[256];
  std::snprintf(text, sizeof text,
                "\"%s\": {\"median_us\": %.3f, \"p10_us\": %.3f, \"p90_us\": %.3f, "
                "\"round_mean_median_us\": %.3f}",
                name, f.median_us, f.p10_us, f.p90_us, f.round_mean_median_us);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 10000;
  check_runtime(cudaFree(nullptr), "context");  // the runtime's primary context, made current
  float* buffers = nullptr;
  const int elements = 1024;
  check_runtime(cudaMalloc(&buffers, 3 * elements * sizeof(float)), "cudaMalloc");
  const float* a = buffers;
  const float* b = buffers + elements;
  float* c = buffers + 2 * elements;
  int n = elements;
  void* args[] = {&a, &b, &c, &n};

  cudaFunction_t runtime_function = nullptr;
  check_runtime(cudaGetFuncBySymbol(&runtime_function, reinterpret_cast<const void*>(empty_kernel)),
                "cudaGetFuncBySymbol");
  CUfunction function = reinterpret_cast<CUfunction>(runtime_function);
  const LaunchKernel cu_launch_kernel = driver_launch_kernel();
  cudaStream_t created = nullptr;
  check_runtime(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking), "stream");
  const dim3 grid(1), block(128);

  std::vector<std::string> rows;
  for (cudaStream_t stream : {static_cast<cudaStream_t>(nullptr), created}) {
    const std::string where = stream ? "created_stream" : "legacy_default_stream";
    rows.push_back(as_json(("cuLaunchKernel_" + where).c_str(), time_launches([&] {
      check_driver(cu_launch_kernel(function, 1, 1, 1, 128, 1, 1, 0, stream, args, nullptr),
                   "cuLaunchKernel");
    }, stream, calls)));
    rows.push_back(as_json(("cudaLaunchKernel_" + where).c_str(), time_launches([&] {
      check_runtime(cudaLaunchKernel(reinterpret_cast<const void*>(empty_kernel), grid, block,
                                     args, 0, stream), "cudaLaunchKernel");
    }, stream, calls)));
  }
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t graph_exec = nullptr;
  check_runtime(cudaStreamBeginCapture(created, cudaStreamCaptureModeThreadLocal), "capture");
  check_runtime(cudaLaunchKernel(reinterpret_cast<const void*>(empty_kernel), grid, block, args, 0,
                                 created), "captured launch");
  check_runtime(cudaStreamEndCapture(created, &graph), "end capture");
  check_runtime(cudaGraphInstantiate(&graph_exec, graph, 0), "instantiate");
  rows.push_back(as_json("cudaGraphLaunch_created_stream", time_launches([&] {
    check_runtime(cudaGraphLaunch(graph_exec, created), "cudaGraphLaunch");
  }, created, calls)));
  // A kernel call's output is new each call: the graph's replay with its kernel node's
  // arguments set first (C alternating between two buffers), as a call through a kept graph
  // would launch
  cudaGraphNode_t node = nullptr;
  size_t nodes = 1;
  check_runtime(cudaGraphGetNodes(graph, &node, &nodes), "cudaGraphGetNodes");
  cudaKernelNodeParams params{};
  check_runtime(cudaGraphKernelNodeGetParams(node, &params), "cudaGraphKernelNodeGetParams");
  float* outputs[] = {c, const_cast<float*>(a)};
  int call = 0;
  rows.push_back(as_json("cudaGraphExecKernelNodeSetParams_cudaGraphLaunch", time_launches([&] {
    c = outputs[++call & 1];
    params.kernelParams = args;
    check_runtime(cudaGraphExecKernelNodeSetParams(graph_exec, node, &params),
                  "cudaGraphExecKernelNodeSetParams");
    check_runtime(cudaGraphLaunch(graph_exec, created), "cudaGraphLaunch");
  }, created, calls)));
  check_runtime(cudaDeviceSynchronize(), "final");

  cudaDeviceProp properties{};
  check_runtime(cudaGetDeviceProperties(&properties, 0), "properties");
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  std::printf("{\"gpu\": \"%s\", \"driver_api_version\": %d, \"runtime_version\": %d, "
              "\"calls\": %d, \"warmup_calls\": %d, \"calls_per_round\": %d, \"paths\": {",
              properties.name, driver, runtime, calls, WARMUP_CALLS, ROUND_CALLS);
  for (size_t i = 0; i < rows.size(); ++i) std::printf("%s%s", i ? ", " : "", rows[i].c_str());
  std::printf("}}\n");
  return 0;
}
