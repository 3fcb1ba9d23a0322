// batch_norm: values against the formula, running-stat updates, gradcheck in training and
// eval with and without affine, the SyncBatchNorm split of the native pieces, and errors.
#include "test_util.h"

#include <cmath>
#include <gradring/core/native/norm/batch_norm.h>
#include <vector>

using namespace gr;
using gr::test::check_close;
using gr::test::check_values;
using gr::test::values;

namespace {

Tensor leaf(const Tensor& t) { return t.detach().requires_grad_(true); }

// Per-channel [C] tensor broadcast against an input of `dim` dims: [1, C, 1, ...].
Tensor per_channel(const Tensor& v, int64_t dim) {
  std::vector<int64_t> shape(static_cast<size_t>(dim), 1);
  shape[1] = v.size(0);
  return v.reshape(shape);
}

std::vector<int64_t> reduce_dims(int64_t dim) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < dim; ++d) dims.push_back(d);
  return dims;
}

// The formula with gr ops: (x - mean) / sqrt(var + eps) * w + b.
Tensor reference(const Tensor& x, const Tensor& mean, const Tensor& var, const Tensor& w, const Tensor& b, double eps) {
  const int64_t d = x.dim();
  Tensor y = (x - per_channel(mean, d)) / (per_channel(var, d) + eps).sqrt();
  if (w.defined()) y = y * per_channel(w, d);
  if (b.defined()) y = y + per_channel(b, d);
  return y;
}

}  // namespace

TEST_CASE("batch_norm training normalises with batch statistics") {
  for (std::vector<int64_t> shape : {std::vector<int64_t>{4, 3}, {3, 2, 5}, {2, 3, 4, 5}}) {
    CAPTURE(shape.size());
    Tensor x = randn(shape, kFloat64) * 3.0 + 1.5;
    Tensor w = randn({shape[1]}, kFloat64), b = randn({shape[1]}, kFloat64);
    std::vector<int64_t> dims = reduce_dims(x.dim());
    Tensor mean = x.mean(dims), var = x.var(dims, false);
    check_close(batch_norm(x, w, b, {}, {}, true, 0.1, 1e-5), reference(x, mean, var, w, b, 1e-5));
    check_close(batch_norm(x, {}, {}, {}, {}, true, 0.1, 1e-3), reference(x, mean, var, {}, {}, 1e-3));
    // float32 agrees.
    check_close(batch_norm(x.to(kFloat32), w.to(kFloat32), b.to(kFloat32), {}, {}, true),
                batch_norm(x, w, b, {}, {}, true), 1e-5);
  }
}

TEST_CASE("batch_norm training updates the running statistics") {
  Tensor x = randn({5, 3, 2, 4}, kFloat64);
  Tensor rm = randn({3}, kFloat64), rv = rand({3}, kFloat64) + 0.5;
  Tensor rm0 = rm.clone(), rv0 = rv.clone();
  uint32_t v0 = rm._version();
  batch_norm(x, {}, {}, rm, rv, true, 0.25, 1e-5);
  CHECK(rm._version() > v0);
  Tensor mean = x.mean({0, 2, 3}), var_unbiased = x.var({0, 2, 3}, true);
  check_close(rm, rm0 * 0.75 + mean * 0.25);
  check_close(rv, rv0 * 0.75 + var_unbiased * 0.25, 1e-10);
  // Only one of them, and float32.
  Tensor rv32 = ones({3}, kFloat32);
  batch_norm(x.to(kFloat32), {}, {}, {}, rv32, true, 0.1, 1e-5);
  check_close(rv32, ones({3}, kFloat64) * 0.9 + var_unbiased * 0.1, 1e-5);
  // Updates happen under NoGradGuard too (they are buffers, not history).
  {
    NoGradGuard guard;
    batch_norm(x, {}, {}, rm, rv, true, 1.0, 1e-5);
  }
  check_close(rm, mean);
  check_close(rv, var_unbiased, 1e-10);
}

TEST_CASE("batch_norm eval uses the running statistics") {
  Tensor x = randn({4, 3, 5}, kFloat64);
  Tensor rm = randn({3}, kFloat64), rv = rand({3}, kFloat64) + 0.5;
  Tensor w = randn({3}, kFloat64), b = randn({3}, kFloat64);
  Tensor rm0 = rm.clone();
  check_close(batch_norm(x, w, b, rm, rv, false, 0.1, 1e-5), reference(x, rm, rv, w, b, 1e-5));
  check_close(batch_norm(x, {}, {}, rm, rv, false), reference(x, rm, rv, {}, {}, 1e-5));
  check_close(rm, rm0);  // untouched
  // Eval backward still works after a training step changed the running stats in place.
  Tensor xl = leaf(x);
  Tensor y = batch_norm(xl, w, b, rm, rv, false);
  Tensor expected_grad = per_channel(w / (rv + 1e-5).sqrt(), 3).expand(x.sizes()).contiguous();
  batch_norm(x, {}, {}, rm, rv, true);
  y.sum().backward();
  check_close(xl.grad(), expected_grad);
}

TEST_CASE("batch_norm gradcheck in training") {
  for (std::vector<int64_t> shape : {std::vector<int64_t>{4, 3}, {3, 2, 4}, {2, 3, 3, 2}}) {
    CAPTURE(shape.size());
    Tensor x = leaf(randn(shape, kFloat64));
    Tensor w = leaf(randn({shape[1]}, kFloat64)), b = leaf(randn({shape[1]}, kFloat64));
    Tensor rm = zeros({shape[1]}, kFloat64), rv = ones({shape[1]}, kFloat64);
    CHECK(autograd::gradcheck(
        [&](const TensorList& in) { return batch_norm(in[0], in[1], in[2], rm, rv, true, 0.1, 1e-5); }, {x, w, b}));
    CHECK(autograd::gradcheck([&](const TensorList& in) { return batch_norm(in[0], {}, {}, {}, {}, true); }, {x}));
    // Only weight and bias.
    Tensor xc = x.detach();
    CHECK(autograd::gradcheck([&](const TensorList& in) { return batch_norm(xc, in[0], in[1], {}, {}, true); }, {w, b}));
  }
  // A non-contiguous input, weight without bias.
  Tensor nc = randn({3, 4, 2}, kFloat64).permute({2, 1, 0}).detach().requires_grad_(true);
  CHECK_FALSE(nc.is_contiguous());
  Tensor w = leaf(randn({4}, kFloat64));
  CHECK(autograd::gradcheck([](const TensorList& in) { return batch_norm(in[0], in[1], {}, {}, {}, true); }, {nc, w}));
}

TEST_CASE("batch_norm backward in float32 matches float64") {
  for (bool training : {true, false}) {
    CAPTURE(training);
    Tensor x = leaf(randn({8, 4, 5, 5}, kFloat64) * 2.0 + 1.0), w = leaf(randn({4}, kFloat64)),
           b = leaf(randn({4}, kFloat64));
    Tensor x32 = leaf(x.to(kFloat32)), w32 = leaf(w.to(kFloat32)), b32 = leaf(b.to(kFloat32));
    Tensor rm = randn({4}, kFloat64), rv = rand({4}, kFloat64) + 0.5;
    Tensor rm32 = rm.to(kFloat32), rv32 = rv.to(kFloat32);
    Tensor g = randn({8, 4, 5, 5}, kFloat64);
    batch_norm(x, w, b, rm, rv, training).backward(g);
    batch_norm(x32, w32, b32, rm32, rv32, training).backward(g.to(kFloat32));
    check_close(x32.grad(), x.grad(), 1e-4);
    check_close(w32.grad(), w.grad(), 1e-4);
    check_close(b32.grad(), b.grad(), 1e-4);
    check_close(rv32, rv, 1e-5);
  }
}

TEST_CASE("batch_norm on small planes agrees with the same values as one large plane per channel") {
  // Planes of at most 16 values take the channel-vectorised kernels (Note [Small batch-norm
  // planes]); x [N, C, S] and x.permute(1, 0, 2) viewed as [1, C, N * S] have the same
  // per-channel statistics, and the second (N * S > 16) takes the per-plane kernels.
  for (auto dtype : {kFloat64, kFloat32}) {
    for (std::vector<int64_t> shape : {std::vector<int64_t>{30, 37, 1}, {5, 300, 4}, {3, 9, 16}, {40, 3, 2}}) {
      CAPTURE(dtype);
      CAPTURE(shape);
      const int64_t N = shape[0], C = shape[1], S = shape[2];
      auto big = [&](const Tensor& t) { return t.permute({1, 0, 2}).reshape({1, C, N * S}); };
      Tensor x = randn(shape, dtype) * 3.0 + 2.0, g = randn(shape, dtype);
      Tensor w = randn({C}, dtype), b = randn({C}, dtype);
      Tensor xs = leaf(x), ws = leaf(w), bs = leaf(b), xb = leaf(big(x)), wb = leaf(w), bb = leaf(b);
      Tensor rms = zeros({C}, dtype), rvs = ones({C}, dtype), rmb = zeros({C}, dtype), rvb = ones({C}, dtype);
      Tensor ys = batch_norm(xs, ws, bs, rms, rvs, true, 0.1, 1e-5), yb = batch_norm(xb, wb, bb, rmb, rvb, true, 0.1, 1e-5);
      ys.backward(g);
      yb.backward(big(g));
      const double tol = dtype == kFloat64 ? 1e-12 : 1e-5;
      check_close(big(ys.detach()), yb.detach(), tol);
      check_close(big(xs.grad()), xb.grad(), tol);
      check_close(ws.grad(), wb.grad(), tol);
      check_close(bs.grad(), bb.grad(), tol);
      check_close(rvs, rvb, tol);
      check_close(rms, rmb, tol);
    }
  }
}

TEST_CASE("batch_norm gradcheck in eval") {
  Tensor x = leaf(randn({3, 2, 2, 3}, kFloat64));
  Tensor w = leaf(randn({2}, kFloat64)), b = leaf(randn({2}, kFloat64));
  Tensor rm = randn({2}, kFloat64), rv = rand({2}, kFloat64) + 0.5;
  CHECK(autograd::gradcheck(
      [&](const TensorList& in) { return batch_norm(in[0], in[1], in[2], rm, rv, false, 0.1, 1e-5); }, {x, w, b}));
  CHECK(autograd::gradcheck([&](const TensorList& in) { return batch_norm(in[0], {}, {}, rm, rv, false); }, {x}));
  CHECK(autograd::gradcheck([&](const TensorList& in) { return batch_norm(in[0], {}, in[1], rm, rv, false); }, {x, b}));
}

TEST_CASE("batch_norm native pieces compose across a split batch (SyncBatchNorm)") {
  // Two "ranks" hold halves of a batch. With the global statistics and summed
  // backward reductions, backward_elemt on each half gives the full batch's gradient.
  Tensor x = randn({6, 3, 4}, kFloat64), dy = randn({6, 3, 4}, kFloat64);
  Tensor w = randn({3}, kFloat64);
  auto [mean, invstd] = native::batch_norm_stats(x, 1e-5);
  native::BatchNormBackwardReduce whole = native::batch_norm_backward_reduce(dy, x, mean, invstd, true, true);
  Tensor full_grad = native::batch_norm_backward_elemt(dy, x, mean, invstd, w, whole.sum_dy, whole.sum_dy_xmu, 24);

  Tensor x0 = x.slice(0, 0, 2), x1 = x.slice(0, 2, 6), dy0 = dy.slice(0, 0, 2), dy1 = dy.slice(0, 2, 6);
  native::BatchNormBackwardReduce r0 = native::batch_norm_backward_reduce(dy0, x0, mean, invstd, false, false);
  native::BatchNormBackwardReduce r1 = native::batch_norm_backward_reduce(dy1, x1, mean, invstd, false, false);
  CHECK_FALSE(r0.grad_weight.defined());
  Tensor sum_dy = r0.sum_dy + r1.sum_dy, sum_dy_xmu = r0.sum_dy_xmu + r1.sum_dy_xmu;
  check_close(sum_dy, whole.sum_dy);
  check_close(whole.grad_bias, whole.sum_dy);
  check_close(whole.grad_weight, whole.sum_dy_xmu * invstd);
  Tensor g0 = native::batch_norm_backward_elemt(dy0, x0, mean, invstd, w, sum_dy, sum_dy_xmu, 24);
  Tensor g1 = native::batch_norm_backward_elemt(dy1, x1, mean, invstd, w, sum_dy, sum_dy_xmu, 24);
  check_close(cat({g0, g1}, 0), full_grad);
  // Per-half stats: mean and invstd of each half; an empty half is finite.
  auto [m0, i0] = native::batch_norm_stats(x0, 1e-5);
  check_close(m0, x0.mean({0, 2}));
  check_close(i0, (x0.var({0, 2}, false) + 1e-5).pow(-0.5));
  auto [me, ie] = native::batch_norm_stats(zeros({0, 3, 4}, kFloat64), 1e-5);
  check_close(me, zeros({3}, kFloat64));
  check_close(ie, full({3}, 1.0 / std::sqrt(1e-5), kFloat64));
}

TEST_CASE("batch_norm argument errors") {
  Tensor x = randn({4, 3, 2}, kFloat64);
  Tensor c3 = ones({3}, kFloat64);
  CHECK_THROWS_WITH_AS(batch_norm(randn({4}, kFloat64), {}, {}, {}, {}, true), doctest::Contains("2-D"), gr::Error);
  CHECK_THROWS_WITH_AS(batch_norm(x, ones({4}, kFloat64), {}, {}, {}, true), doctest::Contains("weight"), gr::Error);
  CHECK_THROWS_WITH_AS(batch_norm(x, {}, ones({3}, kFloat32), {}, {}, true), doctest::Contains("bias"), gr::Error);
  CHECK_THROWS_WITH_AS(batch_norm(x, {}, {}, ones({2}, kFloat64), c3, true), doctest::Contains("running_mean"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(batch_norm(x, {}, {}, c3, ones({3, 1}, kFloat64), false), doctest::Contains("running_var"),
                       gr::Error);
  CHECK_THROWS_WITH_AS(batch_norm(x, {}, {}, {}, {}, false), doctest::Contains("evaluation mode"), gr::Error);
  CHECK_THROWS_WITH_AS(batch_norm(randn({1, 3}, kFloat64), {}, {}, {}, {}, true), doctest::Contains("more than 1"),
                       gr::Error);
  CHECK_NOTHROW(batch_norm(randn({1, 3}, kFloat64), {}, {}, c3, c3, false));  // eval needs no batch
  CHECK_THROWS_WITH_AS(batch_norm(ones({4, 3}, kInt64), {}, {}, {}, {}, true), doctest::Contains("float"), gr::Error);
  CHECK_THROWS_AS(batch_norm(x, {}, {}, {}, {}, true, 0.1, 0.0), gr::Error);
  CHECK_THROWS_AS(native::batch_norm_backward_elemt(x, x, c3, c3, {}, c3, c3, 0), gr::Error);
  CHECK_THROWS_AS(native::batch_norm_backward_reduce(randn({4, 3}, kFloat64), x, c3, c3, true, true), gr::Error);
}
