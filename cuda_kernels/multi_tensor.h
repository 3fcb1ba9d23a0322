// Launches that work on many tensors at once (PyTorch's multi_tensor_apply), their host side
// in plain C++ (no CUDA headers, so the CPU suite checks the packing): each tensor is cut into
// chunks, and tensors and (tensor, chunk) pairs are packed into the kernel's parameters.
// cuda_kernels/multi_tensor.cuh adds the device side.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace gr::cuda {

// Note [Multi-tensor launches]
// One launch covers up to kMaxTensors tensors (Depth pointers each: a parameter, its gradient,
// its optimizer buffers) and kMaxBlocks chunks of kChunk elements; block b runs chunk
// block_chunk[b] of tensor block_tensor[b]. The list is walked in order, and a tensor whose
// chunks do not fit continues in the next launch, so a model's 150 parameters (85 M values)
// take about five launches instead of 150 (or, for the norm of clip_grad_norm_, 745). The
// arguments stay under the 4 KiB every CUDA version passes by value (Depth 5: 3.9 KiB).
// first_block numbers the launch's blocks within the whole list (the norm's partial sums).
constexpr int kMaxTensors = 48;
constexpr int kMaxBlocks = 320;
constexpr int64_t kChunk = 65536;
constexpr int kMultiTensorThreads = 512;

template <int Depth>
struct TensorListArgs {
  void* ptr[Depth][kMaxTensors];
  int64_t numel[kMaxTensors];
  uint8_t block_tensor[kMaxBlocks];
  int32_t block_chunk[kMaxBlocks];
  int64_t first_block;
};
static_assert(sizeof(TensorListArgs<5>) <= 4096, "kernel arguments over 4 KiB");

// The number of chunks of a tensor of n elements.
inline int64_t chunks_of(int64_t n) { return (n + kChunk - 1) / kChunk; }

// Calls launch(args, blocks) for each packed launch over `ptrs` (Depth pointers per tensor;
// null for an absent buffer) and `numels`; empty tensors are skipped. Returns the number of
// blocks in all (the chunks of the whole list, in order).
template <int Depth, class Launch>
int64_t multi_tensor_apply(const std::vector<std::array<void*, Depth>>& ptrs, const std::vector<int64_t>& numels,
                           const Launch& launch) {
  TensorListArgs<Depth> a{};
  int tensors = 0, blocks = 0;
  auto flush = [&] {
    if (blocks > 0) launch(a, blocks);
    a.first_block += blocks;
    blocks = 0;
  };
  auto place = [&](int slot, size_t t) {
    for (int d = 0; d < Depth; ++d) a.ptr[d][slot] = ptrs[t][static_cast<size_t>(d)];
    a.numel[slot] = numels[t];
  };
  for (size_t t = 0; t < ptrs.size(); ++t) {
    const int64_t chunks = chunks_of(numels[t]);
    if (chunks == 0) continue;
    if (tensors == kMaxTensors) {
      flush();
      tensors = 0;
    }
    int slot = tensors++;
    place(slot, t);
    for (int64_t c = 0; c < chunks; ++c) {
      a.block_tensor[blocks] = static_cast<uint8_t>(slot);
      a.block_chunk[blocks] = static_cast<int32_t>(c);
      if (++blocks < kMaxBlocks) continue;
      flush();
      tensors = 0;
      if (c + 1 < chunks) {  // the rest of this tensor opens the next launch
        slot = tensors++;
        place(slot, t);
      }
    }
  }
  flush();
  return a.first_block;
}

}  // namespace gr::cuda
