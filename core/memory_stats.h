// The CPU allocator's statistics: the bytes of CPU memory handed out to tensors now and at
// the peak since the last reset (torch.cuda.memory_allocated / max_memory_allocated, for
// the CPU; sizes as allocated: rounded up to 64 bytes, or to pages for cached blocks).
// bench_ddp's memory table reads them. cuda::memory_stats (core/cuda_memory.h) is the CUDA one.
#pragma once

#include <cstdint>

namespace gr {

struct CpuMemoryStats {
  int64_t allocated_bytes = 0;       // held by live CPU storages
  int64_t peak_allocated_bytes = 0;  // the most held at once since the last reset
};
CpuMemoryStats cpu_memory_stats();
// Starts the peak over from what is allocated now.
void reset_cpu_peak_memory_stats();

}  // namespace gr
