/* A stand-in libcuda.so.1 for tests/test_graph_launch.py: the driver entry points tilec's
 * launchers open, each printing its call (name and the arguments a test checks) to stdout.
 * fake_fail(name, result) makes the named entry point return `result` from then on;
 * fake_capture(stream) makes cuStreamIsCapturing report that stream as capturing. Built with
 * -DFAKE_NO_GRAPHS it lacks the graph entry points, as a driver before CUDA 12.0 does. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef int CUresult;

typedef struct {
  void *func;
  unsigned grid[3], block[3], shared;
  void **params;
  void **extra;
  void *kern;
  void *ctx;
} KernelNodeParams;

static char failing[64];
static CUresult failure;
static void *capturing = (void *)-1;
static uintptr_t handles = 0x1000;

void fake_fail(const char *name, CUresult result) {
  snprintf(failing, sizeof failing, "%s", name);
  failure = result;
}

void fake_capture(void *stream) { capturing = stream; }

static CUresult called(const char *name) {
  return strcmp(name, failing) == 0 ? failure : 0;
}

/* grid, stream and the first three 8-byte arguments: what the tests check */
static void print_launch(const char *name, const unsigned grid[3], void *stream, void **args) {
  printf("%s grid=%u,%u,%u stream=%p args=%llu,%llu,%llu\n", name, grid[0], grid[1], grid[2],
         stream, (unsigned long long)*(uint64_t *)args[0],
         (unsigned long long)*(uint64_t *)args[1], (unsigned long long)*(uint64_t *)args[2]);
}

CUresult cuInit(unsigned flags) { (void)flags; return 0; }
CUresult cuCtxGetCurrent(void **context) { *context = (void *)0x1; return 0; }
CUresult cuCtxSetCurrent(void *context) { (void)context; return 0; }
CUresult cuDeviceGet(int *device, int ordinal) { *device = ordinal; return 0; }
CUresult cuDevicePrimaryCtxRetain(void **context, int device) {
  (void)device;
  *context = (void *)0x1;
  return 0;
}
CUresult cuModuleLoadData(void **module, const void *image) {
  (void)image;
  *module = (void *)0x2;
  return 0;
}
CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  (void)module, (void)name;
  *function = (void *)0x3;
  return 0;
}
CUresult cuFuncSetAttribute(void *function, int attribute, int value) {
  (void)function, (void)attribute, (void)value;
  return 0;
}
CUresult cuGetErrorString(CUresult result, const char **message) {
  static char text[32];
  snprintf(text, sizeof text, "fake error %d", result);
  *message = text;
  return 0;
}
CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, void *stream, void **args,
                        void **extra) {
  (void)function, (void)bx, (void)by, (void)bz, (void)shared, (void)extra;
  unsigned grid[3] = {gx, gy, gz};
  print_launch("cuLaunchKernel", grid, stream, args);
  return called("cuLaunchKernel");
}

#ifndef FAKE_NO_GRAPHS
CUresult cuStreamIsCapturing(void *stream, int *status) {
  *status = stream == capturing ? 1 : 0;
  printf("cuStreamIsCapturing stream=%p -> %d\n", stream, *status);
  return called("cuStreamIsCapturing");
}
CUresult cuGraphCreate(void **graph, unsigned flags) {
  (void)flags;
  *graph = (void *)handles++;
  printf("cuGraphCreate -> %p\n", *graph);
  return called("cuGraphCreate");
}
CUresult cuGraphAddKernelNode_v2(void **node, void *graph, const void *dependencies,
                                 size_t count, const KernelNodeParams *params) {
  (void)dependencies, (void)count;
  *node = (void *)handles++;
  printf("cuGraphAddKernelNode_v2 graph=%p block=%u,%u,%u shared=%u ", graph,
         params->block[0], params->block[1], params->block[2], params->shared);
  print_launch("node", params->grid, NULL, params->params);
  return called("cuGraphAddKernelNode_v2");
}
CUresult cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags) {
  (void)flags;
  *exec = (void *)handles++;
  printf("cuGraphInstantiateWithFlags graph=%p -> %p\n", graph, *exec);
  return called("cuGraphInstantiateWithFlags");
}
CUresult cuGraphExecKernelNodeSetParams_v2(void *exec, void *node,
                                           const KernelNodeParams *params) {
  (void)node;
  printf("cuGraphExecKernelNodeSetParams_v2 exec=%p ", exec);
  print_launch("node", params->grid, NULL, params->params);
  return called("cuGraphExecKernelNodeSetParams_v2");
}
CUresult cuGraphLaunch(void *exec, void *stream) {
  printf("cuGraphLaunch exec=%p stream=%p\n", exec, stream);
  return called("cuGraphLaunch");
}
CUresult cuGraphExecDestroy(void *exec) {
  printf("cuGraphExecDestroy %p\n", exec);
  return 0;
}
CUresult cuGraphDestroy(void *graph) {
  printf("cuGraphDestroy %p\n", graph);
  return 0;
}
#endif
