// The built-in communication hooks.
#include "distributed/ddp/comm_hooks.h"

#include "core/native/copy/copy.h"

namespace gr::distributed {

namespace {

WorkPtr compress_hook(ProcessGroup& group, GradBucket& bucket, ScalarType dtype) {
  Tensor compressed = native::to_dtype(bucket.buffer, dtype);
  WorkPtr work = group.allreduce(compressed, ReduceOp::Sum);
  Tensor dst = bucket.buffer;
  work->then([compressed, dst] { native::copy_(dst, compressed); });
  return work;
}

}  // namespace

WorkPtr allreduce_hook(ProcessGroup& group, GradBucket& bucket) { return group.allreduce(bucket.buffer, ReduceOp::Sum); }
WorkPtr fp16_compress_hook(ProcessGroup& group, GradBucket& bucket) { return compress_hook(group, bucket, kFloat16); }
WorkPtr bf16_compress_hook(ProcessGroup& group, GradBucket& bucket) { return compress_hook(group, bucket, kBFloat16); }

}  // namespace gr::distributed
