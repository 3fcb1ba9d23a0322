// OpenMP-backed parallel_for and thread count control (followed by Eigen through a listener).
#include "core/parallel.h"

#include <omp.h>

#include <algorithm>
#include <exception>

#include <mutex>
#include <vector>

#include "core/error.h"

namespace gr {

namespace {
// A function-local static: listeners in other files register during static initialisation.
struct Listeners {
  std::mutex mutex;
  std::vector<void (*)(int)> on_change;
};
Listeners& listeners() {
  static Listeners l;
  return l;
}
}  // namespace

detail::ThreadCountListener::ThreadCountListener(void (*on_change)(int threads)) {
  std::lock_guard<std::mutex> lock(listeners().mutex);
  listeners().on_change.push_back(on_change);
}

void set_num_threads(int n) {
  GR_CHECK(n >= 1, "set_num_threads: expected a positive thread count, got ", n);
  omp_set_num_threads(n);
  std::lock_guard<std::mutex> lock(listeners().mutex);
  for (auto* on_change : listeners().on_change) on_change(n);
}

int get_num_threads() { return omp_get_max_threads(); }

bool in_parallel_region() { return omp_in_parallel(); }

void parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  int64_t n = end - begin;
  if (n <= 0) return;
  int threads = get_num_threads();
  if (n < grain || threads == 1 || omp_in_parallel()) {
    fn(begin, end);
    return;
  }
  int64_t chunks = std::min<int64_t>(threads, (n + grain - 1) / std::max<int64_t>(grain, 1));
  std::exception_ptr error;
#pragma omp parallel num_threads(static_cast<int>(chunks))
  {
    int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    int64_t chunk = (n + nt - 1) / nt;
    int64_t b = begin + t * chunk, e = std::min(end, b + chunk);
    if (b < e) {
      try {
        fn(b, e);
      } catch (...) {
#pragma omp critical
        error = std::current_exception();
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace gr
