// The per-thread batch context (its generator and pinning) and the row gather.
// See Note [Batch determinism] and Note [Row gather].
#include "data/batch_context.h"

#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/cuda_memory.h"
#include "core/version.h"
#include "core/factory.h"

namespace gr::data {

namespace {

thread_local Generator* current_generator = nullptr;
thread_local bool current_pin = false;

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Rows `indices` of a contiguous CPU tensor [N, ...], one memcpy per row.
Tensor gather(const Tensor& t, std::span<const size_t> indices, bool pinned) {
  std::vector<int64_t> sizes = t.sizes().vec();
  const auto n = static_cast<size_t>(sizes[0]);
  sizes[0] = static_cast<int64_t>(indices.size());
  Tensor out = pinned ? empty_pinned(sizes, t.scalar_type()) : empty(sizes, t.scalar_type());
  const size_t row_bytes = n == 0 ? 0 : t.nbytes() / n;
  const char* src = static_cast<const char*>(t.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  for (size_t i = 0; i < indices.size(); ++i) {
    const size_t row = indices[i];
    GR_CHECK(row < n, "DataLoader: sampler index ", row, " out of range for a dataset of ", n, " examples");
    std::memcpy(dst + i * row_bytes, src + row * row_bytes, row_bytes);
  }
  return out;
}

}  // namespace

Generator& batch_generator() { return current_generator ? *current_generator : default_generator(); }

namespace detail {

uint64_t batch_seed(uint64_t seed, int64_t epoch, int64_t index) {
  return splitmix64(splitmix64(splitmix64(seed) ^ static_cast<uint64_t>(epoch)) ^ static_cast<uint64_t>(index));
}

BatchScope::BatchScope(uint64_t seed, int64_t epoch, int64_t index, bool pin)
    : generator_(batch_seed(seed, epoch, index)), previous_generator_(current_generator), previous_pin_(current_pin) {
  current_generator = &generator_;
  current_pin = pin;
}

BatchScope::~BatchScope() {
  current_generator = previous_generator_;
  current_pin = previous_pin_;
}

bool batch_pinned() { return current_pin; }

NoPinScope::NoPinScope() : saved_(current_pin) { current_pin = false; }
NoPinScope::~NoPinScope() { current_pin = saved_; }

bool pin_batches(bool requested) {
  if (!requested) return false;
  if (cuda_is_available()) return true;
  static std::once_flag notice;
  std::call_once(notice, [] {
    std::fprintf(stderr, "gradring: DataLoader pin_memory=true but no CUDA device is available; batches stay in pageable memory\n");
  });
  return false;
}

std::optional<Example<>> gather_rows(const Example<>& rows, std::span<const size_t> indices) {
  const Tensor &data = rows.data, &target = rows.target;
  if (!data.is_cpu() || !target.is_cpu() || !data.is_contiguous() || !target.is_contiguous()) return std::nullopt;
  GR_CHECK(data.dim() >= 1 && target.dim() >= 1 && data.size(0) == target.size(0), "DataLoader: the dataset's rows ",
           data.toString(), " and ", target.toString(), " do not have the same number of rows");
  return Example<>{gather(data, indices, batch_pinned()), gather(target, indices, batch_pinned())};
}

}  // namespace detail

}  // namespace gr::data
