// The device side of the multi-tensor launches (Note [Multi-tensor launches] in
// multi_tensor.h): which chunk a block runs. Included by .cu files only.
#pragma once

#include "cuda_kernels/multi_tensor.h"

namespace gr::cuda {

// The chunk of block blockIdx.x: its tensor's slot and element range [begin, end).
template <int Depth>
struct ChunkOf {
  int slot;
  int64_t begin, end;
  __device__ explicit ChunkOf(const TensorListArgs<Depth>& a) : slot(a.block_tensor[blockIdx.x]) {
    begin = static_cast<int64_t>(a.block_chunk[blockIdx.x]) * kChunk;
    end = a.numel[slot] < begin + kChunk ? a.numel[slot] : begin + kChunk;
  }
};

}  // namespace gr::cuda
