// The caching device allocator on a real device: reuse without cudaMalloc, stats, stream
// separation, record_stream, empty_cache, the out-of-memory error; pinned host memory and
// asynchronous host-to-device copies from it.
#include <chrono>

#include "core/cuda_memory.h"
#include "cuda_kernels/caching_allocator.h"
#include "cuda_kernels/event.h"
#include "gate.h"
#include "parity.h"

using namespace gr;
using namespace std::chrono_literals;
using cuda_test::cuda0;
using cuda_test::Gate;

namespace {
Tensor cuda_empty(int64_t n) { return empty({n}, TensorOptions(kFloat32).device(cuda0())); }
}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("caching allocator: a freed block is reused without cudaMalloc; stats follow") {
    cuda::empty_cache();
    cuda::reset_peak_memory_stats(0);
    const cuda::MemoryStats before = cuda::memory_stats(0);
    void* first = nullptr;
    {
      Tensor a = cuda_empty(1000);  // 4000 bytes, rounded to 4096
      first = a.data_ptr();
      const cuda::MemoryStats s = cuda::memory_stats(0);
      CHECK(s.allocated_bytes - before.allocated_bytes == 4096);
      CHECK(s.requested_bytes - before.requested_bytes == 4000);
      CHECK(s.active_blocks - before.active_blocks == 1);
      CHECK(s.reserved_bytes >= s.allocated_bytes);
    }
    const cuda::MemoryStats after_free = cuda::memory_stats(0);
    CHECK(after_free.allocated_bytes == before.allocated_bytes);
    CHECK(after_free.peak_allocated_bytes >= before.allocated_bytes + 4096);
    Tensor b = cuda_empty(1000);
    CHECK(b.data_ptr() == first);
    CHECK(cuda::memory_stats(0).raw_allocs == after_free.raw_allocs);
    CHECK(cuda::memory_stats().raw_allocs == after_free.raw_allocs);  // -1: the current device
  }

  // 24 MiB requests get segments of their own (no 20 MiB segment can hold them), so which
  // block they get does not depend on what earlier tests left in the cache.
  TEST_CASE("caching allocator: memory freed on one stream is not handed to another") {
    cuda::empty_cache();
    const cuda::Stream side = cuda::Stream::create(0);
    REQUIRE(side != cuda::Stream::current(0));
    void* on_side = nullptr;
    {
      cuda::StreamGuard guard(side);
      Tensor a = cuda_empty(6 << 20);
      on_side = a.data_ptr();
    }
    Tensor b = cuda_empty(6 << 20);  // the default stream: never side's block
    CHECK(b.data_ptr() != on_side);
    cuda::StreamGuard guard(side);
    Tensor c = cuda_empty(6 << 20);
    CHECK(c.data_ptr() == on_side);
  }

  TEST_CASE("record_stream: memory used on a busy stream is reused only after that stream's work") {
    cuda::empty_cache();
    const cuda::Stream side = cuda::Stream::create(0);
    Gate gate;
    void* used = nullptr;
    {
      Tensor a = zeros({6 << 20}, TensorOptions(kFloat32).device(cuda0()));
      used = a.data_ptr();
      cuda::Event ready;
      ready.record();
      side.wait(ready);
      gate.hold(side.handle());  // side is busy "using" a until the gate opens
      cuda::record_stream(a, side);
    }
    CHECK(cuda::memory_stats(0).pending_blocks >= 1);
    Tensor b = cuda_empty(6 << 20);
    CHECK(b.data_ptr() != used);
    gate.open();
    side.synchronize();
    CHECK_FALSE(gate.timed_out());
    Tensor c = cuda_empty(6 << 20);  // the event has completed: a's block is back
    CHECK(c.data_ptr() == used);
    CHECK_THROWS_WITH_AS(cuda::record_stream(ones({2}), side), doctest::Contains("expected a CUDA tensor"), gr::Error);
  }

  TEST_CASE("empty_cache returns unused segments; an impossible allocation fails clearly") {
    { Tensor big = cuda_empty(int64_t{64} << 20); }  // 256 MiB, cached after this scope
    const cuda::MemoryStats cached = cuda::memory_stats(0);
    CHECK(cached.reserved_bytes - cached.allocated_bytes >= (int64_t{256} << 20));
    cuda::empty_cache();
    const cuda::MemoryStats emptied = cuda::memory_stats(0);
    CHECK(emptied.reserved_bytes <= cached.reserved_bytes - (int64_t{256} << 20));
    CHECK(emptied.raw_frees > cached.raw_frees);
    CHECK(emptied.allocated_bytes == cached.allocated_bytes);

    CHECK_THROWS_WITH_AS(cuda_empty(int64_t{1} << 48), doctest::Contains("CUDA out of memory on cuda:0"), gr::Error);
    const cuda::MemoryStats failed = cuda::memory_stats(0);
    CHECK(failed.ooms == emptied.ooms + 1);
    CHECK(failed.alloc_retries == emptied.alloc_retries + 1);
    Tensor still_works = ones({4}, TensorOptions(kFloat32).device(cuda0()));
    CHECK(still_works.sum().item<float>() == 4.0f);
  }

  TEST_CASE("pinned memory: pin_memory, is_pinned, and non-blocking host-to-device copies") {
    Tensor x = cuda_test::random_tensor({256, 64}, kFloat32, 7);
    Tensor p = pin_memory(x);
    CHECK(is_pinned(p));
    CHECK_FALSE(is_pinned(x));
    CHECK(p.equal(x));
    CHECK(cuda::pinned_memory_stats().allocated_bytes >= static_cast<int64_t>(x.nbytes()));

    // With the current stream held by the gate, a non_blocking copy from pinned memory must
    // return at once.
    Gate gate;
    gate.hold(cuda::current_stream());
    const auto start = std::chrono::steady_clock::now();
    Tensor d = p.to(cuda0(), /*non_blocking=*/true);
    const auto queued = std::chrono::steady_clock::now() - start;
    void* source = p.data_ptr();
    p = Tensor();  // freeing the source right away is safe: its block waits for the copy
    CHECK(queued < 2s);
    CHECK(cuda::pinned_memory_stats().pending_blocks >= 1);
    Tensor q = empty_pinned({256, 64}, kFloat32);
    CHECK(q.data_ptr() != source);  // not the block the copy is still reading
    gate.open();
    CHECK(d.cpu().equal(x));  // the copy back waits for the stream
    CHECK_FALSE(gate.timed_out());

    // Without non_blocking a copy from pinned memory waits for the copy, as torch's.
    Tensor pinned = pin_memory(x);
    Gate held;
    held.hold(cuda::current_stream());
    std::thread releaser([&] {
      std::this_thread::sleep_for(300ms);
      held.open();
    });
    const auto b0 = std::chrono::steady_clock::now();
    Tensor blocking = pinned.to(cuda0());
    const auto blocked = std::chrono::steady_clock::now() - b0;
    releaser.join();
    CHECK(blocked >= 250ms);
    CHECK(blocking.cpu().equal(x));

    // A pageable source stays synchronous even with non_blocking: the copy returns only
    // after the gate opens.
    Gate slow;
    slow.hold(cuda::current_stream());
    std::thread opener([&] {
      std::this_thread::sleep_for(300ms);
      slow.open();
    });
    const auto t0 = std::chrono::steady_clock::now();
    Tensor e = x.to(cuda0(), /*non_blocking=*/true);
    const auto waited = std::chrono::steady_clock::now() - t0;
    opener.join();
    CHECK(waited >= 250ms);
    CHECK(e.cpu().equal(x));
  }
}
