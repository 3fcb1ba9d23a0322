// gr::use_deterministic_algorithms (core/deterministic.h) on the CPU: the switch and its
// warn_only mode, alert_not_deterministic naming the op, the scatter schedule a CUDA kernel
// takes under it (Note [Deterministic scatter]), and advanced-index writes in order.
#include <gradring/core/native/index_ops.h>

#include "test_util.h"

using namespace gr;
using native::ScatterReduce;
using native::ScatterSchedule;

namespace {
// Sets the switch for a scope and restores what it was.
class DeterministicGuard {
 public:
  DeterministicGuard(bool mode, bool warn_only = false)
      : mode_(are_deterministic_algorithms_enabled()), warn_only_(is_deterministic_algorithms_warn_only_enabled()) {
    use_deterministic_algorithms(mode, warn_only);
  }
  ~DeterministicGuard() { use_deterministic_algorithms(mode_, warn_only_); }

 private:
  bool mode_, warn_only_;
};
}  // namespace

TEST_CASE("use_deterministic_algorithms: off by default, on and off, warn_only") {
  CHECK_FALSE(are_deterministic_algorithms_enabled());
  {
    DeterministicGuard on(true);
    CHECK(are_deterministic_algorithms_enabled());
    CHECK_FALSE(is_deterministic_algorithms_warn_only_enabled());
    {
      DeterministicGuard warn(true, true);
      CHECK(is_deterministic_algorithms_warn_only_enabled());
    }
    CHECK_FALSE(is_deterministic_algorithms_warn_only_enabled());
  }
  CHECK_FALSE(are_deterministic_algorithms_enabled());
}

TEST_CASE("alert_not_deterministic: nothing while off, an error naming the op while on, a warning with warn_only") {
  CHECK_NOTHROW(alert_not_deterministic("scatter_reduce_cuda"));
  {
    DeterministicGuard on(true);
    CHECK_THROWS_WITH_AS(alert_not_deterministic("scatter_reduce_cuda"),
                         doctest::Contains("scatter_reduce_cuda does not have a deterministic implementation"),
                         gr::Error);
  }
  DeterministicGuard warn(true, true);
  CHECK_NOTHROW(alert_not_deterministic("scatter_reduce_cuda"));
}

TEST_CASE("scatter_schedule: atomics by default; under the switch a thread per rest position, one for serial passes") {
  native::ScatterLoop along_dim;  // scatter_add, index_add, the embedding backward
  along_dim.n = 64;
  native::ScatterLoop serial;  // index_put_ with accumulate (several index tensors)
  serial.serial = true;
  for (ScatterReduce r : {ScatterReduce::None, ScatterReduce::Add, ScatterReduce::Multiply}) {
    CAPTURE(static_cast<int>(r));
    CHECK(native::scatter_schedule(along_dim, kFloat32, r, false) == ScatterSchedule::kPerElement);
    CHECK(native::scatter_schedule(serial, kFloat32, r, false) == ScatterSchedule::kPerElement);
    CHECK(native::scatter_schedule(along_dim, kFloat32, r, true) == ScatterSchedule::kPerRestPosition);
    CHECK(native::scatter_schedule(along_dim, kBFloat16, r, true) == ScatterSchedule::kPerRestPosition);
    CHECK(native::scatter_schedule(serial, kFloat64, r, true) == ScatterSchedule::kSingleThread);
  }
  // Integer sums and products come out the same in any order: atomics stay.
  CHECK(native::scatter_schedule(along_dim, kInt64, ScatterReduce::Add, true) == ScatterSchedule::kPerElement);
  CHECK(native::scatter_schedule(serial, kInt32, ScatterReduce::Multiply, true) == ScatterSchedule::kPerElement);
  // ... but which of two stores lands last does not.
  CHECK(native::scatter_schedule(serial, kInt64, ScatterReduce::None, true) == ScatterSchedule::kSingleThread);
}

TEST_CASE("index_put_ without accumulate under the switch: repeated positions keep the last value, every run") {
  // Two index tensors (the serial advanced-index pass); position (3, 5) is written first and
  // last of 200000 writes, which the CPU spreads over its threads unless the pass is serial.
  const int64_t n = 200000;
  std::vector<int64_t> rows(n), cols(n);
  for (int64_t i = 0; i < n; ++i) rows[i] = (i * 7) % 64, cols[i] = (i * 13) % 64;
  rows.front() = rows.back() = 3;
  cols.front() = cols.back() = 5;
  Tensor r = tensor(rows, TensorOptions(kInt64)), c = tensor(cols, TensorOptions(kInt64));
  Tensor v = arange(n, TensorOptions(kFloat32));
  DeterministicGuard on(true);
  for (int run = 0; run < 3; ++run) {
    Tensor x = zeros({64, 64});
    x.index_put_({r, c}, v);
    CHECK(x[3][5].item<float>() == static_cast<float>(n - 1));
  }
}
