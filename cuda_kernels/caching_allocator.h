// The caching CUDA device allocator: one BlockPool per device over cudaMalloc/cudaFree, with
// memory keyed by the stream current at allocation (see Note [Block pool]), its stats,
// empty_cache(), record_stream(), and the CudaHooks that core's cuda_memory.h calls.
#pragma once

#include "core/block_pool.h"
#include "core/cuda_memory.h"
#include "core/tensor.h"
#include "cuda_kernels/stream.h"

namespace gr::cuda {

// Note [Cross-stream use]
// The memory of a CUDA tensor belongs to the stream that was current when it was allocated;
// after the tensor dies, that stream may get the memory again at once, since its later work
// is ordered after the earlier. If the tensor is also used on another stream S (a side
// stream, a communication stream), call record_stream(t, S) once that work is queued: when
// the memory is freed, an event is recorded on S and the memory is reused only after the
// event has completed. Without it, S may still read or write memory that has been reused.
void record_stream(const Tensor& t, const Stream& stream);

// Per device (-1: the current device).
BlockPoolStats device_memory_stats(int device);
void reset_device_peak_stats(int device);
// Every device's unused cached segments go back to CUDA.
void empty_device_cache();

// What initialize_backend() installs with gr::detail::set_cuda_hooks().
gr::detail::CudaHooks* cuda_hooks();

}  // namespace gr::cuda
