// BlockPool: the bookkeeping of a caching allocator (size classes, per-stream free lists,
// splitting, merging, deferred reuse after cross-stream use, stats), without any device call:
// memory and events come from a BlockPoolBackend. The CUDA device allocator and the pinned
// host allocator run on it; tests/core drives it with a fake backend. See Note [Block pool].
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace gr {

// Note [Block pool]
// Sizes are rounded up to 512 bytes. Requests up to 1 MiB ("small") are carved from 2 MiB
// segments; larger ones from 20 MiB segments when under 10 MiB, else from a segment of the
// size rounded up to 2 MiB (PyTorch's CUDACachingAllocator classes). A free block is found
// best-fit (smallest, then lowest address) among the free blocks *of the same stream* and
// split when the rest is worth keeping (>= 512 B small, > 1 MiB large). A freed block merges
// with free neighbours of its segment. Memory is keyed by the stream it was allocated on:
// work on that stream is ordered, so a block freed there can be handed out again at once.
// A block also used on other streams (record_stream) is not reused when freed: an event is
// recorded on each of those streams, and the block returns to its pool only once they have
// all completed (checked at the next allocate(), or waited for by empty_cache()).
// When the backend is out of memory, allocate() releases every cached segment and retries
// once; if that fails too it returns nullptr (the caller raises its OOM error).
class BlockPoolBackend {
 public:
  virtual ~BlockPoolBackend() = default;
  // A new segment of `bytes`; nullptr when out of memory (other failures throw).
  virtual void* raw_alloc(size_t bytes) = 0;
  virtual void raw_free(void* ptr) noexcept = 0;
  // An event capturing the work queued on `stream` so far; release_event() gives it back.
  virtual void* record_event(uintptr_t stream) = 0;
  virtual bool event_done(void* event) = 0;
  virtual void event_synchronize(void* event) = 0;
  virtual void release_event(void* event) noexcept = 0;
};

struct BlockPoolStats {
  int64_t allocated_bytes = 0;       // blocks handed out (rounded sizes)
  int64_t requested_bytes = 0;       // what the callers asked for
  int64_t reserved_bytes = 0;        // segments held from the backend
  int64_t peak_allocated_bytes = 0;  // since construction or reset_peak_stats()
  int64_t peak_reserved_bytes = 0;
  int64_t active_blocks = 0;         // blocks handed out
  int64_t segments = 0;              // segments held
  int64_t pending_blocks = 0;        // freed, waiting for events of other streams
  int64_t raw_allocs = 0;            // backend raw_alloc() calls that succeeded (cudaMalloc)
  int64_t raw_frees = 0;
  int64_t alloc_retries = 0;         // allocations that released the cache and retried
  int64_t ooms = 0;                  // allocations that failed after the retry
};

class BlockPool {
 public:
  static constexpr size_t kMinBlockSize = 512;
  static constexpr size_t kSmallSize = size_t{1} << 20;
  static constexpr size_t kSmallBuffer = size_t{2} << 20;
  static constexpr size_t kLargeBuffer = size_t{20} << 20;
  static constexpr size_t kMinLargeAlloc = size_t{10} << 20;
  static constexpr size_t kRoundLarge = size_t{2} << 20;

  // A block's size for a request of `bytes` (> 0), and the segment size allocated for it.
  static size_t round_size(size_t bytes);
  static size_t segment_size(size_t rounded);

  explicit BlockPool(BlockPoolBackend* backend);
  ~BlockPool();  // returns every segment and pending event to the backend
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  // A block of at least `bytes` (> 0) for use on `stream`; nullptr when out of memory after
  // releasing the cache and retrying once.
  void* allocate(size_t bytes, uintptr_t stream);
  // Gives back a pointer allocate() returned. Throws only if the backend fails to record an
  // event; the block then stays out of circulation.
  void free(void* ptr);
  // Marks the block holding `ptr` (any address inside it) as used on `stream` too; no-op for
  // the stream it was allocated on. Returns false when `ptr` is not in an allocated block.
  bool record_stream(const void* ptr, uintptr_t stream);
  // Whether `ptr` lies in a block handed out by this pool.
  bool owns(const void* ptr) const;
  // Waits for pending events, then returns every fully free segment to the backend.
  void empty_cache();
  BlockPoolStats stats() const;
  void reset_peak_stats();

 private:
  struct Block;
  struct BySize {
    bool operator()(const Block* a, const Block* b) const;
  };
  using FreeList = std::set<Block*, BySize>;
  struct Pending {
    void* event;
    Block* block;
  };

  Block* find_free(FreeList& list, uintptr_t stream, size_t size);
  Block* new_segment(size_t size, uintptr_t stream, bool small);
  Block* allocated_block(const void* ptr) const;  // the handed-out block containing ptr
  void free_block(Block* block);                   // into its free list, merged
  void retire(const Pending& p);
  void process_events();
  void synchronize_events();
  void release_cached_segments();
  void add_allocated(int64_t bytes);
  void add_reserved(int64_t bytes);

  BlockPoolBackend* backend_;
  mutable std::mutex mutex_;
  FreeList small_, large_;
  std::map<uintptr_t, Block*> allocated_;  // by address, so interior pointers find their block
  std::vector<Pending> pending_;
  BlockPoolStats stats_;
};

// "tried to allocate X MiB; Y MiB allocated, Z MiB reserved", for out-of-memory errors.
std::string describe_allocation_failure(size_t bytes, const BlockPoolStats& stats);

}  // namespace gr
