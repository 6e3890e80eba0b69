// Drives launcher/graph_launch.h over the stand-in driver (fake_libcuda.c) from commands on
// stdin, one a line, for tests/test_graph_launch.py:
//   make 0|1                  a GraphLaunch, the graph launch wanted or not
//   launch STREAM GX A B C    a launch of grid (GX, 1, 1) with arguments A, B, C on STREAM
//   overflow                  a launch of more argument values than GraphLaunch takes
//   capture STREAM            cuStreamIsCapturing reports STREAM capturing, no other
//   fail NAME RESULT          the driver's NAME returns RESULT from then on
//   reason | destroy
// Each launch prints "result R", reason prints "reason TEXT"; the driver prints its calls.
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "graph_launch.h"

extern "C" void fake_fail(const char *name, int result);
extern "C" void fake_capture(void *stream);

int main() {
  std::unique_ptr<tilec_cuda::GraphLaunch> launch;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream words(line);
    std::string command;
    words >> command;
    std::fflush(stdout);
    if (command == "make") {
      int wanted = 0;
      words >> wanted;
      launch = std::make_unique<tilec_cuda::GraphLaunch>(wanted != 0);
    } else if (command == "launch") {
      unsigned long long stream = 0;
      unsigned grid[3] = {1, 1, 1}, block[3] = {256, 1, 1};
      uint64_t values[3];
      words >> std::hex >> stream >> std::dec >> grid[0] >> values[0] >> values[1] >> values[2];
      int result = launch->launch(reinterpret_cast<void *>(0x3), grid, block, 0,
                                  reinterpret_cast<void *>(stream), values, 3);
      std::printf("result %d\n", result);
    } else if (command == "overflow") {  // more argument values than a launch takes
      unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
      uint64_t values[tilec_cuda::GraphLaunch::kMaxArguments + 1] = {};
      std::printf("result %d\n", launch->launch(reinterpret_cast<void *>(0x3), grid, block, 0,
                                                nullptr, values,
                                                tilec_cuda::GraphLaunch::kMaxArguments + 1));
    } else if (command == "capture") {
      unsigned long long stream = 0;
      words >> std::hex >> stream;
      fake_capture(reinterpret_cast<void *>(stream));
    } else if (command == "fail") {
      std::string name;
      int result = 0;
      words >> name >> result;
      fake_fail(name.c_str(), result);
    } else if (command == "reason") {
      std::printf("reason %s\n", launch->reason().c_str());
    } else if (command == "destroy") {
      launch.reset();
    }
    std::fflush(stdout);
  }
  (void)launch.release();  // destroyed only by `destroy`, so a transcript ends at its last line
  return 0;
}
