// The apps' --device option: "cpu", "cuda" or "cuda:N", with the CPU (and a one-line notice)
// when no CUDA device can be used, and one device per rank in distributed runs.
#pragma once

#include <gradring/core/device.h>
#include <gradring/core/error.h>
#include <gradring/core/version.h>

#include <cstdio>
#include <string>

namespace gr::apps {

// The device to run on. A bad spec throws gr::Error. "cuda" without an index gives rank
// `local_rank` of the node's `local_world_size` ranks its own GPU, cuda:<local_rank>; with
// fewer GPUs than ranks (NCCL needs one each) it says so and returns the CPU. "cuda:N" must
// exist. Without a usable device prints why, once, and returns the CPU.
inline Device pick_device(const std::string& spec, const char* app, int local_rank = 0, int local_world_size = 1) {
  Device requested(spec);  // "cpu", "cuda", "cuda:1"; anything else throws naming the spec
  if (requested.is_cpu()) return requested;
  const int count = cuda_device_count();
  if (count == 0) {
    // A CUDA build has just said so itself ("gradring: no CUDA device found; running on CPU").
    if (!built_with_cuda())
      std::fprintf(stderr, "%s: --device %s: this build has no CUDA backend; running on the CPU\n", app, spec.c_str());
    return Device(kCPU);
  }
  const bool indexed = spec.find(':') != std::string::npos;
  if (!indexed) {
    if (local_world_size > count) {
      if (local_rank == 0)
        std::fprintf(stderr, "%s: --device %s: %d ranks on this node but %d CUDA device(s) (one per rank is needed); running on the CPU\n",
                     app, spec.c_str(), local_world_size, count);
      return Device(kCPU);
    }
    return Device(kCUDA, local_rank);
  }
  GR_CHECK(requested.index() >= 0 && requested.index() < count, app, ": --device ", spec, ": only ", count,
           " CUDA device(s) are visible (cuda:0 to cuda:", count - 1, ")");
  return requested;
}

}  // namespace gr::apps
