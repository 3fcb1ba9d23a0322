// The hot kernels' fast paths against their general paths on odd shapes: scatter out of place
// (Note [Scatter out of place]) against the in-place scatter on a copy, row max/min (Note
// [NaN-blind extremes]) against the strided-column fold, float row sums (Note [Float sums
// in a cascade]) against double.
#include <cmath>
#include <cstring>

#include "core/native/activation/activation.h"
#include "core/native/reduce/lane_sums.h"
#include "test_util.h"

using namespace gr;

namespace {
Tensor seeded(std::vector<int64_t> shape, uint64_t seed, ScalarType dtype = kFloat32) {
  Generator g(seed);
  return randn(shape, TensorOptions(dtype), &g);
}
Tensor indices(std::vector<int64_t> shape, int64_t high, uint64_t seed) {
  Generator g(seed);
  return randint(0, high, shape, kInt64, &g);
}
// The same values, with another layout: rows become strided (for ops that keep layouts).
Tensor strided(const Tensor& t) { return t.t().contiguous().t(); }
// x's rows as columns of a contiguous tensor: reducing them over dim 0 runs the column fold.
Tensor as_columns(const Tensor& x) { return x.t().contiguous(); }
}  // namespace

TEST_CASE("scatter out of place equals the in-place scatter on a copy") {
  struct Case {
    std::vector<int64_t> self, index;
    int64_t dim;
  };
  const std::vector<Case> cases = {
      {{37, 53}, {37, 20}, 1},     {{37, 53}, {60, 53}, 0},     {{5, 7, 9}, {5, 7, 30}, 2},
      {{5, 7, 9}, {5, 11, 9}, 1},  {{5, 7, 9}, {12, 7, 9}, 0},  {{64}, {300}, 0},
      {{37, 53}, {30, 20}, 1},  // index smaller than self outside dim: copied whole first
      {{37, 53}, {37, 0}, 1},   // empty index: a plain copy
      {{1, 2000}, {1, 5000}, 1},  {{2000, 3}, {2000, 9}, 1},
  };
  for (const Case& c : cases) {
    for (bool transposed : {false, true}) {
      CAPTURE(c.self);
      CAPTURE(c.dim);
      CAPTURE(transposed);
      Tensor self = seeded(c.self, 1);
      if (transposed && self.dim() == 2) self = strided(self);
      const int64_t size = self.size(c.dim);
      Tensor index = indices(c.index, size, 2), src = seeded(c.index, 3);
      Tensor out = self.scatter_add(c.dim, index, src);
      CHECK(out.is_contiguous());
      CHECK(out.equal(self.clone().scatter_add_(c.dim, index, src)));
      CHECK(self.scatter(c.dim, index, src).equal(self.clone().scatter_(c.dim, index, src)));
      CHECK(self.scatter(c.dim, index, 2.5).equal(self.clone().scatter_(c.dim, index, 2.5)));
      CHECK(self.scatter(c.dim, index, src, "multiply").equal(self.clone().scatter_(c.dim, index, src, "multiply")));
      // int64 and float64 take the same path.
      Tensor big = self.to(kFloat64), whole = (self * 100).to(kInt64);
      CHECK(big.scatter_add(c.dim, index, src.to(kFloat64)).equal(big.clone().scatter_add_(c.dim, index, src.to(kFloat64))));
      CHECK(whole.scatter_add(c.dim, index, index).equal(whole.clone().scatter_add_(c.dim, index, index)));
    }
  }
  // 0-d self and index.
  Tensor s = scalar_tensor(1.5, kFloat32);
  CHECK(s.scatter_add(0, zeros({}, kInt64), scalar_tensor(2.0, kFloat32)).item<float>() == 3.5f);
  // An invalid index still fails with the op's message, out of place as in place.
  Tensor x = seeded({4, 5}, 4);
  CHECK(test::error_of([&] { x.scatter_add(1, full({4, 2}, 5, kInt64), seeded({4, 2}, 5)); })
            .find("scatter_add: index 5 is out of bounds for dimension 1 with size 5") != std::string::npos);
  // The result does not alias self, and self is unchanged.
  Tensor before = x.clone();
  Tensor y = x.scatter_add(1, indices({4, 3}, 5, 6), seeded({4, 3}, 7));
  CHECK(x.equal(before));
  CHECK(!y.storage().is_same(x.storage()));
}

TEST_CASE("row max and min equal the column fold, NaN, infinities and signed zeros included") {
  const float nan = NAN, inf = INFINITY;
  for (int64_t n : {1, 7, 31, 32, 33, 64, 100, 1000, 1029}) {
    for (int64_t nan_at : {-1, 0, 3, 40, 999, 1028}) {
      CAPTURE(n);
      CAPTURE(nan_at);
      Tensor x = seeded({6, n}, static_cast<uint64_t>(n));
      if (nan_at >= 0 && nan_at < n) x.index_put_({2, nan_at}, nan);
      x.index_put_({3}, -inf);
      x.index_put_({4, n / 2}, inf);
      x.index_put_({5}, 0.0f);
      if (n > 3) x.index_put_({5, n - 2}, -0.0f);
      const Tensor cols = as_columns(x);
      for (bool is_max : {true, false}) {
        Tensor a = is_max ? x.amax(-1) : x.amin(-1), b = is_max ? cols.amax(0) : cols.amin(0);
        for (int64_t r = 0; r < 6; ++r) {
          const float u = a[r].item<float>(), v = b[r].item<float>();
          CHECK((u == v || (std::isnan(u) && std::isnan(v))));  // the sign of a zero depends on the order
          // The row fold is lane_fold's, bit for bit (the sign of zero too).
          const float* row = x.data_ptr<float>() + r * n;
          const float want = is_max ? native::lane_fold(reduce_ops::Max<float>{}, n, [row](int64_t i) { return row[i]; })
                                    : native::lane_fold(reduce_ops::Min<float>{}, n, [row](int64_t i) { return row[i]; });
          CHECK(std::memcmp(&u, &want, sizeof u) == 0);
        }
        // max with indices finds the same values.
        Tensor m = std::get<0>(is_max ? x.max(-1) : x.min(-1));
        CHECK(m.isnan().equal(a.isnan()));
        CHECK(m.masked_fill(m.isnan(), 0).equal(a.masked_fill(a.isnan(), 0)));
      }
    }
  }
}

TEST_CASE("float row sums agree with double sums on odd shapes") {
  for (int64_t n : {0, 1, 31, 32, 33, 512, 513, 16383, 16384, 16385, 100000}) {
    CAPTURE(n);
    Tensor x = seeded({3, n}, static_cast<uint64_t>(n) + 11);
    Tensor want = x.to(kFloat64).sum(-1), magnitude = x.to(kFloat64).abs().sum(-1);
    Tensor got = x.sum(-1);
    CHECK(got.dtype() == kFloat32);
    for (int64_t r = 0; r < 3; ++r)  // float rounding of partial sums, relative to the sum of |x|
      CHECK(std::abs(got[r].item<double>() - want[r].item<double>()) <= 1e-6 * std::abs(want[r].item<double>()) + 2e-7 * magnitude[r].item<double>());
    // The column fold and the mean take their own paths to the same sums.
    test::check_close(as_columns(x).sum(0).to(kFloat64), want, 1e-4 * std::sqrt(n + 1.0));
    if (n > 0) test::check_close(x.mean(-1).to(kFloat64), want / static_cast<double>(n), 1e-5);
  }
}

TEST_CASE("masked_fill's vector select equals the strided loop and a plain loop") {
  for (ScalarType t : {kFloat32, kFloat64, kInt64, kBool, kBFloat16}) {
    for (std::vector<int64_t> shape : {std::vector<int64_t>{37, 53}, {1, 1}, {0, 5}, {3, 4096}}) {
      CAPTURE(t);
      CAPTURE(shape);
      Generator g(8);
      Tensor x = (randn(shape, TensorOptions(kFloat32), &g) * 10).to(t);
      Tensor mask = rand(shape, TensorOptions(kFloat32), &g).lt(0.5);
      Tensor got = x.masked_fill(mask, 3);
      CHECK(got.equal(strided(x).masked_fill(strided(mask), 3)));  // the strided loop
      Tensor want = x.clone();
      for (int64_t i = 0; i < x.numel(); ++i)
        if (mask.reshape({-1})[i].item<bool>()) want.reshape({-1}).index_put_({i}, 3);
      CHECK(got.equal(want));
      // In place, and with a mask broadcast over rows.
      Tensor y = x.clone();
      y.masked_fill_(mask, 3);
      CHECK(y.equal(want));
      if (shape[0] > 0) {
        Tensor row_mask = mask.narrow(0, 0, 1);
        CHECK(x.masked_fill(row_mask, 3).equal(x.masked_fill(row_mask.expand(shape).contiguous(), 3)));
      }
    }
  }
  Tensor nan_fill = ones({5, 33}, kFloat32).masked_fill(eye(33, kBool).narrow(0, 0, 5), NAN);
  CHECK(nan_fill.isnan().sum().item<int64_t>() == 5);
}

TEST_CASE("index_select's row copies equal the element loop") {
  // Rows of 4 KB to 1 MB go through copy_row's vector loop (See Note [Row copies]); shorter and
  // longer ones through memcpy; strided rows through the element loop.
  for (int64_t C : {1, 1000, 1024, 1029, 4096 + 3, 300000}) {
    CAPTURE(C);
    Tensor x = seeded({7, C}, 9);
    Tensor rows = tensor(std::vector<int64_t>{6, 0, 3, 3, 1}, kInt64);
    Tensor got = x.index_select(0, rows);
    CHECK(got.equal(strided(x).index_select(0, rows)));
    for (int64_t k = 0; k < 5; ++k) CHECK(got[k].equal(x[rows[k].item<int64_t>()]));
  }
}

TEST_CASE("reduced-float element-wise ops in chunks equal the whole-tensor conversions, bitwise") {
  // See Note [Reduced float math in chunks]: contiguous inputs of the result's shape run in
  // chunks; a transposed view of the same values (or a broadcast operand) takes the
  // whole-tensor path. 300 x 700 spans many chunks and both threads.
  for (ScalarType t : {kBFloat16, kFloat16}) {
    CAPTURE(t);
    Tensor a = seeded({300, 700}, 1).to(t), b = seeded({300, 700}, 2).to(t), c = seeded({300, 700}, 3).to(t);
    Tensor f = seeded({300, 700}, 4);  // float32: read in place in the chunks
    auto other = [](const Tensor& x) { return strided(x); };
    CHECK(equal(native::gelu(a, "none"), native::gelu(other(a), "none")));
    CHECK(equal(native::gelu_backward(b, a, "tanh"), native::gelu_backward(other(b), other(a), "tanh")));
    CHECK(equal(a + b, other(a) + other(b)));
    CHECK(equal(a * f, other(a) * other(f)));  // a mixed product: float32 result
    CHECK((a * f).scalar_type() == kFloat32);
    CHECK(equal(f + a, f + other(a)));
    CHECK(equal(a.lerp(b, c), other(a).lerp(other(b), other(c))));
    CHECK(equal(a.exp(), other(a).exp()));
    // The chunked results are those of float32 math on the same values, rounded once.
    CHECK(equal(native::gelu(a, "none"), native::gelu(a.to(kFloat32), "none").to(t)));
    CHECK(equal(a + b, (a.to(kFloat32) + b.to(kFloat32)).to(t)));
  }
}
