// The CPU allocator's statistics (core/memory_stats.h): bytes allocated now and at the peak.
#include <doctest/doctest.h>

#include "core/allocator.h"
#include "core/memory_stats.h"
#include "test_util.h"

using namespace gr;

TEST_CASE("cpu_memory_stats counts live CPU tensors and the peak, small and cached blocks alike") {
  reset_cpu_peak_memory_stats();
  const CpuMemoryStats before = cpu_memory_stats();
  CHECK(before.peak_allocated_bytes == before.allocated_bytes);
  {
    Tensor small = empty({10}, kFloat32);      // 40 bytes: one 64-byte block
    Tensor big = empty({1 << 20}, kFloat32);  // 4 MiB: a cached, page-rounded block
    const CpuMemoryStats during = cpu_memory_stats();
    CHECK(during.allocated_bytes - before.allocated_bytes == 64 + (4 << 20));
    CHECK(during.peak_allocated_bytes >= during.allocated_bytes);
  }
  const CpuMemoryStats after = cpu_memory_stats();
  CHECK(after.allocated_bytes == before.allocated_bytes);  // freed (the cached block is not counted)
  CHECK(after.peak_allocated_bytes - before.allocated_bytes >= 64 + (4 << 20));
  reset_cpu_peak_memory_stats();
  CHECK(cpu_memory_stats().peak_allocated_bytes == after.allocated_bytes);
  cpu_empty_cache();  // the 4 MiB block would be a cache hit for test_tensor's cache test
}
