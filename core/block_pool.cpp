// BlockPool: size classes, best-fit search per stream, splitting and merging, deferred reuse
// through events, stats. See Note [Block pool].
#include "core/block_pool.h"

#include <algorithm>
#include <cstdio>
#include <tuple>
#include <utility>

#include "core/error.h"

namespace gr {

// One piece of a segment. Pieces of a segment form a doubly linked list in address order.
struct BlockPool::Block {
  Block(char* p, size_t n, uintptr_t s, bool sm, Block* before = nullptr, Block* after = nullptr)
      : ptr(p), size(n), stream(s), small(sm), prev(before), next(after) {}
  char* ptr;
  size_t size;
  uintptr_t stream;  // the stream the segment was allocated for
  bool small;        // which free list it belongs to
  Block* prev;
  Block* next;
  bool allocated = false;
  size_t requested = 0;                // while allocated
  int event_count = 0;                 // outstanding events before it may be reused
  std::vector<uintptr_t> stream_uses;  // other streams it was used on (record_stream)
};

bool BlockPool::BySize::operator()(const Block* a, const Block* b) const {
  return std::tie(a->stream, a->size, a->ptr) < std::tie(b->stream, b->size, b->ptr);
}

size_t BlockPool::round_size(size_t bytes) {
  return bytes < kMinBlockSize ? kMinBlockSize : (bytes + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
}

size_t BlockPool::segment_size(size_t rounded) {
  if (rounded <= kSmallSize) return kSmallBuffer;
  if (rounded < kMinLargeAlloc) return kLargeBuffer;
  return (rounded + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
}

BlockPool::BlockPool(BlockPoolBackend* backend) : backend_(backend) {}

BlockPool::~BlockPool() {
  std::vector<Block*> heads;
  auto collect = [&](Block* b) {
    if (!b->prev) heads.push_back(b);
  };
  for (Block* b : small_) collect(b);
  for (Block* b : large_) collect(b);
  for (auto& [addr, b] : allocated_) collect(b);
  for (const Pending& p : pending_) {
    backend_->release_event(p.event);
    collect(p.block);
  }
  std::sort(heads.begin(), heads.end());
  heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
  for (Block* head : heads) {
    backend_->raw_free(head->ptr);
    for (Block* b = head; b;) delete std::exchange(b, b->next);
  }
}

void BlockPool::add_allocated(int64_t bytes) {
  stats_.allocated_bytes += bytes;
  stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
}

void BlockPool::add_reserved(int64_t bytes) {
  stats_.reserved_bytes += bytes;
  stats_.peak_reserved_bytes = std::max(stats_.peak_reserved_bytes, stats_.reserved_bytes);
}

BlockPool::Block* BlockPool::find_free(FreeList& list, uintptr_t stream, size_t size) {
  Block key{nullptr, size, stream, false};
  auto it = list.lower_bound(&key);
  if (it == list.end() || (*it)->stream != stream) return nullptr;
  Block* b = *it;
  list.erase(it);
  return b;
}

BlockPool::Block* BlockPool::new_segment(size_t size, uintptr_t stream, bool small) {
  void* p = backend_->raw_alloc(size);
  if (!p) return nullptr;
  ++stats_.raw_allocs;
  ++stats_.segments;
  add_reserved(static_cast<int64_t>(size));
  return new Block{static_cast<char*>(p), size, stream, small};
}

void* BlockPool::allocate(size_t bytes, uintptr_t stream) {
  GR_CHECK(bytes > 0 && bytes <= SIZE_MAX - kRoundLarge, "BlockPool::allocate: bad size ", bytes);
  std::lock_guard lock(mutex_);
  process_events();
  const size_t size = round_size(bytes);
  const bool small = size <= kSmallSize;
  FreeList& list = small ? small_ : large_;
  Block* b = find_free(list, stream, size);
  if (!b) b = new_segment(segment_size(size), stream, small);
  if (!b) {
    // Out of memory: give every cached segment back and try once more.
    ++stats_.alloc_retries;
    synchronize_events();
    release_cached_segments();
    b = find_free(list, stream, size);
    if (!b) b = new_segment(segment_size(size), stream, small);
    if (!b) {
      ++stats_.ooms;
      return nullptr;
    }
  }
  const size_t rest = b->size - size;
  if (small ? rest >= kMinBlockSize : rest > kSmallSize) {
    Block* tail = new Block{b->ptr + size, rest, stream, small, b, b->next};
    if (b->next) b->next->prev = tail;
    b->next = tail;
    b->size = size;
    list.insert(tail);
  }
  b->allocated = true;
  b->requested = bytes;
  allocated_.emplace(reinterpret_cast<uintptr_t>(b->ptr), b);
  add_allocated(static_cast<int64_t>(b->size));
  stats_.requested_bytes += static_cast<int64_t>(bytes);
  ++stats_.active_blocks;
  return b->ptr;
}

void BlockPool::free(void* ptr) {
  std::lock_guard lock(mutex_);
  auto it = allocated_.find(reinterpret_cast<uintptr_t>(ptr));
  GR_CHECK(it != allocated_.end(), "BlockPool::free: ", ptr, " was not allocated here or was freed twice");
  Block* b = it->second;
  // Events first: if recording fails, the block stays allocated (never reused) and we throw.
  std::vector<void*> events;
  try {
    for (uintptr_t s : b->stream_uses) events.push_back(backend_->record_event(s));
  } catch (...) {
    for (void* e : events) backend_->release_event(e);
    throw;
  }
  allocated_.erase(it);
  b->allocated = false;
  b->stream_uses.clear();
  add_allocated(-static_cast<int64_t>(b->size));
  stats_.requested_bytes -= static_cast<int64_t>(b->requested);
  --stats_.active_blocks;
  if (events.empty()) {
    free_block(b);
    return;
  }
  b->event_count = static_cast<int>(events.size());
  for (void* e : events) pending_.push_back({e, b});
  ++stats_.pending_blocks;
}

void BlockPool::free_block(Block* b) {
  FreeList& list = b->small ? small_ : large_;
  auto is_free = [](const Block* n) { return n && !n->allocated && n->event_count == 0; };
  // `a` takes over its neighbour `next` on the segment.
  auto merge = [](Block* a, Block* next) {
    a->size += next->size;
    a->next = next->next;
    if (next->next) next->next->prev = a;
    delete next;
  };
  if (is_free(b->prev)) {
    Block* p = b->prev;
    list.erase(p);
    merge(p, b);
    b = p;
  }
  if (is_free(b->next)) {
    list.erase(b->next);
    merge(b, b->next);
  }
  list.insert(b);
}

// Returns blocks whose events have all completed to their free lists.
void BlockPool::process_events() {
  if (pending_.empty()) return;
  std::vector<Pending> keep;
  for (size_t i = 0; i < pending_.size(); ++i) {
    const Pending p = pending_[i];
    bool done = false;
    try {
      done = backend_->event_done(p.event);
    } catch (...) {
      keep.insert(keep.end(), pending_.begin() + static_cast<std::ptrdiff_t>(i), pending_.end());
      pending_.swap(keep);
      throw;
    }
    if (done) retire(p);
    else keep.push_back(p);
  }
  pending_.swap(keep);
}

// A completed event: its block returns to the free list once its last event is retired.
void BlockPool::retire(const Pending& p) {
  backend_->release_event(p.event);
  if (--p.block->event_count == 0) {
    --stats_.pending_blocks;
    free_block(p.block);
  }
}

void BlockPool::synchronize_events() {
  while (!pending_.empty()) {
    const Pending p = pending_.back();
    backend_->event_synchronize(p.event);
    pending_.pop_back();
    retire(p);
  }
}

void BlockPool::release_cached_segments() {
  for (FreeList* list : {&small_, &large_}) {
    for (auto it = list->begin(); it != list->end();) {
      Block* b = *it;
      if (b->prev || b->next) {
        ++it;
        continue;
      }
      it = list->erase(it);
      backend_->raw_free(b->ptr);
      ++stats_.raw_frees;
      --stats_.segments;
      add_reserved(-static_cast<int64_t>(b->size));
      delete b;
    }
  }
}

BlockPool::Block* BlockPool::allocated_block(const void* ptr) const {
  const auto addr = reinterpret_cast<uintptr_t>(ptr);
  auto it = allocated_.upper_bound(addr);
  if (it == allocated_.begin()) return nullptr;
  --it;
  return addr < it->first + it->second->size ? it->second : nullptr;
}

bool BlockPool::record_stream(const void* ptr, uintptr_t stream) {
  std::lock_guard lock(mutex_);
  Block* b = allocated_block(ptr);
  if (!b) return false;
  if (stream != b->stream && std::find(b->stream_uses.begin(), b->stream_uses.end(), stream) == b->stream_uses.end())
    b->stream_uses.push_back(stream);
  return true;
}

bool BlockPool::owns(const void* ptr) const {
  std::lock_guard lock(mutex_);
  return allocated_block(ptr) != nullptr;
}

void BlockPool::empty_cache() {
  std::lock_guard lock(mutex_);
  synchronize_events();
  release_cached_segments();
}

BlockPoolStats BlockPool::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void BlockPool::reset_peak_stats() {
  std::lock_guard lock(mutex_);
  stats_.peak_allocated_bytes = stats_.allocated_bytes;
  stats_.peak_reserved_bytes = stats_.reserved_bytes;
}

std::string describe_allocation_failure(size_t bytes, const BlockPoolStats& stats) {
  auto mib = [](double b) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f MiB", b / (1024.0 * 1024.0));
    return std::string(text);
  };
  return detail::str_cat("tried to allocate ", mib(static_cast<double>(bytes)), "; ",
                         mib(static_cast<double>(stats.allocated_bytes)), " allocated, ",
                         mib(static_cast<double>(stats.reserved_bytes)), " reserved by gradring");
}

}  // namespace gr
