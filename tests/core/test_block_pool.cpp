// BlockPool, the bookkeeping of the CUDA caching allocator, driven by a fake device: size
// classes, splitting, merging, reuse per stream, deferred reuse after record_stream, stats,
// empty_cache and the release-and-retry on out-of-memory.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "core/block_pool.h"
#include "core/error.h"

using namespace gr;

namespace {

constexpr size_t MiB = size_t{1} << 20;

// Hands out fake addresses (never dereferenced) up to a capacity; events complete when told.
class FakeDevice final : public BlockPoolBackend {
 public:
  struct Event {
    uintptr_t stream;
    bool done = false;
  };

  explicit FakeDevice(size_t capacity) : capacity_(capacity) {}

  void* raw_alloc(size_t bytes) override {
    ++alloc_calls;
    if (used_ + bytes > capacity_) return nullptr;
    used_ += bytes;
    const uintptr_t p = next_;
    next_ += bytes + MiB;  // a gap, so segments are never adjacent
    live[p] = bytes;
    return reinterpret_cast<void*>(p);
  }
  void raw_free(void* ptr) noexcept override {
    auto it = live.find(reinterpret_cast<uintptr_t>(ptr));
    REQUIRE(it != live.end());
    used_ -= it->second;
    live.erase(it);
  }
  void* record_event(uintptr_t stream) override {
    auto* e = new Event{stream};
    events.insert(e);
    return e;
  }
  bool event_done(void* e) override { return static_cast<Event*>(e)->done; }
  void event_synchronize(void* e) override {
    ++synchronized;
    static_cast<Event*>(e)->done = true;
  }
  void release_event(void* e) noexcept override {
    events.erase(static_cast<Event*>(e));
    delete static_cast<Event*>(e);
  }
  void complete_all() {
    for (Event* e : events) e->done = true;
  }

  std::map<uintptr_t, size_t> live;  // segments by address
  std::set<Event*> events;
  int alloc_calls = 0, synchronized = 0;

 private:
  size_t capacity_, used_ = 0;
  uintptr_t next_ = uintptr_t{1} << 32;
};

uintptr_t addr(void* p) { return reinterpret_cast<uintptr_t>(p); }

}  // namespace

TEST_CASE("BlockPool: size classes follow PyTorch's caching allocator") {
  CHECK(BlockPool::round_size(1) == 512);
  CHECK(BlockPool::round_size(512) == 512);
  CHECK(BlockPool::round_size(513) == 1024);
  CHECK(BlockPool::segment_size(512) == 2 * MiB);
  CHECK(BlockPool::segment_size(MiB) == 2 * MiB);
  CHECK(BlockPool::segment_size(MiB + 512) == 20 * MiB);
  CHECK(BlockPool::segment_size(10 * MiB - 512) == 20 * MiB);
  CHECK(BlockPool::segment_size(10 * MiB) == 10 * MiB);
  CHECK(BlockPool::segment_size(11 * MiB) == 12 * MiB);
}

TEST_CASE("BlockPool: small blocks are split from one 2 MiB segment and merge back") {
  FakeDevice dev(1 << 30);
  {
    BlockPool pool(&dev);
    void* a = pool.allocate(1000, 1);
    void* b = pool.allocate(100, 1);
    void* c = pool.allocate(4096, 1);
    CHECK(dev.alloc_calls == 1);
    CHECK(addr(b) == addr(a) + 1024);  // best fit at the lowest address: right after a
    CHECK(addr(c) == addr(b) + 512);
    BlockPoolStats s = pool.stats();
    CHECK(s.allocated_bytes == 1024 + 512 + 4096);
    CHECK(s.requested_bytes == 1000 + 100 + 4096);
    CHECK(s.reserved_bytes == static_cast<int64_t>(2 * MiB));
    CHECK(s.active_blocks == 3);
    CHECK(s.segments == 1);
    CHECK(pool.owns(static_cast<char*>(c) + 100));
    CHECK_FALSE(pool.owns(static_cast<char*>(c) + 4096));  // the free rest of the segment

    pool.free(b);
    void* d = pool.allocate(512, 1);  // the hole b left is the best fit
    CHECK(d == b);
    pool.free(a);
    pool.free(d);  // merges with a's block: 1536 bytes free at the start
    void* e = pool.allocate(1500, 1);
    CHECK(e == a);
    pool.free(e);
    pool.free(c);  // everything merged back into one free segment
    s = pool.stats();
    CHECK(s.allocated_bytes == 0);
    CHECK(s.requested_bytes == 0);
    CHECK(s.active_blocks == 0);
    CHECK(s.peak_allocated_bytes == 1024 + 512 + 4096);
    void* half = pool.allocate(MiB, 1);  // two 1 MiB halves fit only if it merged completely
    void* other_half = pool.allocate(MiB, 1);
    CHECK(half == a);
    CHECK(addr(other_half) == addr(a) + MiB);
    CHECK(dev.alloc_calls == 1);
    pool.free(half);
    pool.free(other_half);
    CHECK_THROWS_AS(pool.free(half), gr::Error);  // double free
  }
  CHECK(dev.live.empty());  // the destructor returned the segment
}

TEST_CASE("BlockPool: large blocks split only when more than 1 MiB is left") {
  FakeDevice dev(1 << 30);
  BlockPool pool(&dev);
  void* a = pool.allocate(3 * MiB, 7);  // from a 20 MiB segment, the rest stays free
  CHECK(pool.stats().reserved_bytes == static_cast<int64_t>(20 * MiB));
  void* b = pool.allocate(16 * MiB, 7);
  CHECK(addr(b) == addr(a) + 3 * MiB);
  void* c = pool.allocate(MiB + 512, 7);  // 1 MiB left over: not enough to split, new segment
  CHECK(dev.alloc_calls == 2);
  pool.free(b);
  void* d = pool.allocate(16 * MiB + 512, 7);  // b's 17 MiB block, rest 512 KiB not split off
  CHECK(d == b);
  CHECK(pool.stats().allocated_bytes == static_cast<int64_t>(3 * MiB + 17 * MiB + MiB + 512));
  pool.free(a);
  pool.free(c);
  pool.free(d);
  void* big = pool.allocate(11 * MiB, 8);  // >= 10 MiB: its own segment, rounded up to 2 MiB
  CHECK(pool.stats().reserved_bytes == static_cast<int64_t>(40 * MiB + 12 * MiB));
  pool.free(big);
}

TEST_CASE("BlockPool: a freed block is reused only on the stream it was allocated on") {
  FakeDevice dev(1 << 30);
  BlockPool pool(&dev);
  void* a = pool.allocate(MiB, 1);
  pool.free(a);
  void* b = pool.allocate(MiB, 2);
  CHECK(b != a);
  CHECK(dev.alloc_calls == 2);
  void* c = pool.allocate(MiB, 1);
  CHECK(c == a);
  pool.free(b);
  pool.free(c);
  CHECK(pool.stats().segments == 2);
}

TEST_CASE("BlockPool: record_stream defers reuse until the other stream's event completes") {
  FakeDevice dev(1 << 30);
  BlockPool pool(&dev);
  void* a = pool.allocate(4096, 1);
  CHECK(pool.record_stream(static_cast<char*>(a) + 10, 2));  // an interior pointer finds the block
  CHECK(pool.record_stream(a, 2));                           // recorded once
  CHECK(pool.record_stream(a, 1));                           // own stream: nothing to wait for
  CHECK_FALSE(pool.record_stream(reinterpret_cast<void*>(16), 2));
  pool.free(a);
  REQUIRE(dev.events.size() == 1);
  CHECK((*dev.events.begin())->stream == 2);
  CHECK(pool.stats().pending_blocks == 1);
  CHECK(pool.stats().allocated_bytes == 0);

  void* b = pool.allocate(4096, 1);  // stream 2 may still read a: not handed out
  CHECK(b != a);
  dev.complete_all();
  void* c = pool.allocate(4096, 1);  // the event completed: a is back in its free list
  CHECK(c == a);
  CHECK(dev.events.empty());
  CHECK(pool.stats().pending_blocks == 0);
  pool.free(b);
  pool.free(c);
  CHECK(pool.stats().segments == 1);
}

TEST_CASE("BlockPool: empty_cache waits for pending events and returns only fully free segments") {
  FakeDevice dev(1 << 30);
  BlockPool pool(&dev);
  void* small = pool.allocate(1000, 1);
  void* kept = pool.allocate(1000, 1);  // same segment as small, stays allocated
  void* large = pool.allocate(4 * MiB, 1);
  void* other = pool.allocate(12 * MiB, 3);
  pool.record_stream(other, 4);
  pool.free(small);
  pool.free(large);
  pool.free(other);
  CHECK(pool.stats().segments == 3);
  CHECK(pool.stats().pending_blocks == 1);
  pool.empty_cache();
  CHECK(dev.synchronized == 1);
  BlockPoolStats s = pool.stats();
  CHECK(s.segments == 1);  // the small segment still holds `kept`
  CHECK(s.reserved_bytes == static_cast<int64_t>(2 * MiB));
  CHECK(s.raw_frees == 2);
  CHECK(s.pending_blocks == 0);
  CHECK(dev.live.size() == 1);
  CHECK(s.peak_reserved_bytes == static_cast<int64_t>(2 * MiB + 20 * MiB + 12 * MiB));
  pool.reset_peak_stats();
  CHECK(pool.stats().peak_reserved_bytes == static_cast<int64_t>(2 * MiB));
  CHECK(pool.stats().peak_allocated_bytes == 1024);
  pool.free(kept);
  pool.empty_cache();
  CHECK(dev.live.empty());
  CHECK(pool.stats().reserved_bytes == 0);
}

TEST_CASE("BlockPool: out of memory releases the cache, retries once, then fails") {
  FakeDevice dev(40 * MiB);
  BlockPool pool(&dev);
  void* a = pool.allocate(12 * MiB, 1);  // 12 MiB segment
  void* b = pool.allocate(12 * MiB, 2);  // another stream: its own 12 MiB segment
  pool.free(a);
  pool.free(b);
  // 30 MiB does not fit next to the 24 MiB cached: the cache goes back, the retry succeeds.
  void* c = pool.allocate(30 * MiB, 1);
  REQUIRE(c != nullptr);
  BlockPoolStats s = pool.stats();
  CHECK(s.alloc_retries == 1);
  CHECK(s.ooms == 0);
  CHECK(s.raw_frees == 2);
  CHECK(s.reserved_bytes == static_cast<int64_t>(30 * MiB));
  // 20 MiB more cannot fit even with an empty cache.
  CHECK(pool.allocate(20 * MiB, 1) == nullptr);
  s = pool.stats();
  CHECK(s.alloc_retries == 2);
  CHECK(s.ooms == 1);
  CHECK(s.allocated_bytes == static_cast<int64_t>(30 * MiB));
  const std::string message = describe_allocation_failure(20 * MiB, s);
  CHECK(message == "tried to allocate 20.00 MiB; 30.00 MiB allocated, 30.00 MiB reserved by gradring");
  pool.free(c);
  CHECK_THROWS_AS(pool.allocate(0, 1), gr::Error);
}

TEST_CASE("BlockPool: a block waiting for events is not merged until they complete") {
  FakeDevice dev(1 << 30);
  BlockPool pool(&dev);
  void* a = pool.allocate(1024, 1);
  void* b = pool.allocate(1024, 1);
  pool.record_stream(b, 9);
  pool.free(b);  // pending
  pool.free(a);  // free, but its neighbour b is not
  void* c = pool.allocate(2048, 1);
  CHECK(addr(c) == addr(b) + 1024);  // placed after b: a's 1 KiB hole was too small
  dev.complete_all();
  pool.free(c);
  void* d = pool.allocate(MiB, 1);  // all merged: two halves of the segment again
  void* e = pool.allocate(MiB, 1);
  CHECK(d == a);
  CHECK(addr(e) == addr(a) + MiB);
  CHECK(dev.alloc_calls == 1);
  pool.free(d);
  pool.free(e);
}
