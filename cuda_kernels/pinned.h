// Page-locked ("pinned") host memory: a BlockPool over cudaHostAlloc, so batches reuse their
// buffers, and the bookkeeping that lets host-to-device copies from it run asynchronously.
#pragma once

#include <cuda_runtime_api.h>

#include "core/allocator.h"
#include "core/block_pool.h"

namespace gr::cuda {

// Note [Pinned copies]
// A host-to-device copy with non_blocking (x.to(device, /*non_blocking=*/true), copy_(src,
// true)) whose source lies in memory from allocate_pinned() (pin_memory(), empty_pinned(), a
// DataLoader with pin_memory) is queued on the destination device's current stream and
// returns without a host wait: the DMA engine reads the page-locked source directly. Without
// non_blocking it waits for the copy, as torch's does. The source block is marked as used on that stream, so dropping the CPU
// tensor at once is safe: its memory is reused only after the copy has run (Note [Block
// pool]). Writing into the pinned tensor before the copy has run races with it: synchronize
// the stream, or an Event recorded after the copy, first. Work on the same stream is ordered
// after the copy; other streams wait for an Event. Copies from pageable memory, from pinned
// memory not allocated here, and all device-to-host copies stay synchronous.

// CPU memory of `nbytes` in a pinned block (nullptr for 0); throws when out of pinned memory.
DataPtr allocate_pinned(size_t nbytes);
// Whether `ptr` is page-locked memory (ours, or registered elsewhere with CUDA).
bool is_pinned_ptr(const void* ptr);
// Marks the pinned block holding `ptr` as used on `stream`; false when ptr is not memory
// from allocate_pinned() (the caller must then copy synchronously).
bool record_pinned_use(const void* ptr, cudaStream_t stream);
BlockPoolStats pinned_stats();
void empty_pinned_cache();

}  // namespace gr::cuda
