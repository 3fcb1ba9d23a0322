// DDP communication hooks: how a bucket of gradients is reduced (as torch's
// register_comm_hook): the default all-reduce, and bfloat16 / float16 compression.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "distributed/backends/process_group.h"

namespace gr::distributed {

// A bucket as a communication hook sees it: `buffer` holds this rank's gradients of the
// bucket's parameters, already divided by the world size. The hook must leave the reduced
// result in `buffer` by the time its Work completes (Work::then can post-process).
struct GradBucket {
  size_t index = 0;
  Tensor buffer;
  std::vector<std::string> parameter_names;
  bool is_last = false;  // the last bucket launched in an iteration
};
using CommHook = std::function<WorkPtr(ProcessGroup&, GradBucket&)>;

// The default hook: all-reduce (sum) of the bucket.
WorkPtr allreduce_hook(ProcessGroup& group, GradBucket& bucket);
// Compression hooks: the bucket is cast to float16 / bfloat16, all-reduced, and cast back
// (half the bytes on the wire; the division by the world size happened before, in float32).
WorkPtr fp16_compress_hook(ProcessGroup& group, GradBucket& bucket);
WorkPtr bf16_compress_hook(ProcessGroup& group, GradBucket& bucket);

}  // namespace gr::distributed
