// CPU threading: gr::set_num_threads and parallel_for over index ranges (OpenMP underneath).
#pragma once

#include <cstdint>
#include <functional>

namespace gr {

// Threads used by CPU kernels and GEMM (OpenMP and Eigen). Default: OpenMP's default.
void set_num_threads(int n);
int get_num_threads();

namespace detail {
// A library with its own thread count (the Eigen GEMM) follows set_num_threads through a
// listener registered next to its code (a static object), as kernels register with their
// dispatch stubs, so core/parallel.cpp knows nothing of it.
struct ThreadCountListener {
  explicit ThreadCountListener(void (*on_change)(int threads));
};
}  // namespace detail

// Below this many elements a loop runs on the calling thread: threads cost microseconds.
constexpr int64_t kGrainSize = 32768;

bool in_parallel_region();

// Calls fn(begin, end) on disjoint chunks covering [begin, end), on up to get_num_threads()
// threads when the range is at least `grain` long; otherwise inline.
void parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace gr
