// main() of the NCCL suite (ctest runs each mode as its own test):
//   --no-device   hides every device (CUDA_VISIBLE_DEVICES="") and runs "nccl_no_device":
//                 argument checks, dtype/op mapping, error text, and the clear failure of
//                 the nccl backend without a GPU (runs on any machine);
//   --ranks N     runs "nccl" with N ranks, one GPU each (spawned processes); exits 77
//                 (ctest: skipped) when fewer than N devices are visible.
// The device count comes from a forked child: this process must not initialize CUDA itself,
// since the ranks are forked from it and a forked child cannot use its parent's CUDA context.
#define DOCTEST_CONFIG_IMPLEMENT
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "nccl_test_util.h"

namespace gr::test {
int g_nccl_ranks = 1;
}

namespace {
int device_count_in_child() {
  const pid_t pid = fork();
  if (pid == 0) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
    _exit(count > 100 ? 100 : count);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return 0;
  return WEXITSTATUS(status);
}
}  // namespace

int main(int argc, char** argv) {
  std::string mode;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-device") == 0) {
      mode = argv[i];
    } else if (std::strcmp(argv[i], "--ranks") == 0 && i + 1 < argc) {
      mode = argv[i];
      gr::test::g_nccl_ranks = std::atoi(argv[++i]);
    } else {
      args.push_back(argv[i]);
    }
  }
  doctest::Context context(static_cast<int>(args.size()), args.data());
  if (mode == "--no-device") {
    setenv("CUDA_VISIBLE_DEVICES", "", 1);  // read by the driver at its first call, in the tests
    context.addFilter("test-suite", "nccl_no_device");
    return context.run();
  }
  if (mode != "--ranks" || gr::test::g_nccl_ranks < 1) {
    std::fprintf(stderr, "usage: test_nccl --no-device | --ranks N [doctest options]\n");
    return 2;
  }
  const int devices = device_count_in_child();
  if (devices < gr::test::g_nccl_ranks) {
    std::printf("test_nccl --ranks %d: SKIPPED: %d CUDA device(s) visible, one per rank needed\n",
                gr::test::g_nccl_ranks, devices);
    return 77;
  }
  context.addFilter("test-suite", "nccl");
  return context.run();
}
