// gpu_selftest checks of the reductions and linear algebra family: every reduction kernel of
// cuda_kernels/reduce_ops.cu over rows, columns and all elements (NaN and dtype handling
// included), scans, median, and the products built on cuBLAS (addmm, baddbmm, einsum).
#include <cmath>

#include "selftest/checks.h"

namespace gr::selftest {

namespace {
// Integers in [-3, 3] (repeats and zeros), as float32.
Tensor small_ints(IntArrayRef shape, uint64_t seed) { return (randn_(shape, seed) * 2).round().clamp(-3, 3); }
}  // namespace

GR_SELFTEST_CHECKS(add_reduce_checks) {
  c.push_back({"reduce", "sum/mean/prod/amax/amin rows, columns, all f32 [129,1031]",
               [] { return TensorList{randn_({129, 1031}, 300)}; },
               [](const TensorList& x) {
                 const Tensor& a = x[0];
                 return TensorList{sum(a, {1}),        mean(a, {0}, true), (a * 0.01 + 1).prod(1), amax(a, {1}),
                                   amin(a, {0}),       a.amax(),           sum(a, {0, 1}),         a.mean()};
               },
               kF32Reduce});
  c.push_back({"reduce", "sum f16/bf16 (float accumulation) and int64 [64,4097]",
               [] { return TensorList{randn_({64, 4097}, 301)}; },
               [](const TensorList& x) {
                 return TensorList{sum(x[0].to(kFloat16), {1}).to(kFloat32), sum(x[0].to(kBFloat16), {1}).to(kFloat32),
                                   sum((x[0] * 10).to(kInt64), {1}), sum(x[0], {1}, false, kFloat64)};
               },
               {1e-3, 1e-3}});
  c.push_back({"reduce", "var/std/var_mean correction 0,1,2 f64 [33,517] dims 0,1",
               [] { return TensorList{randn_({33, 517}, 302, kFloat64) + 3}; },
               [](const TensorList& x) {
                 auto [v, m] = var_mean(x[0], {1}, Scalar(2));
                 return TensorList{var(x[0], {0}), x[0].std({1}, Scalar(0)), v, m, gr::std(x[0])};
               },
               kF64});
  c.push_back({"reduce", "norms p=0,1,2,3,inf,-inf and logsumexp f32 [100,300]",
               [] { return TensorList{small_ints({100, 300}, 303)}; },
               [](const TensorList& x) {
                 const Tensor& a = x[0];
                 return TensorList{norm(a, 0.0, {1}), norm(a, 1, {1}), a.norm(2, {0}),      norm(a, 3, {1}),
                                   norm(a, INFINITY, {0}), linalg::vector_norm(a, -INFINITY, 1), logsumexp(a * 10, {1})};
               },
               kF32Reduce});
  c.push_back({"reduce", "any/all/count_nonzero and max/min/argmin with NaN f32 [70,90]",
               [] {
                 Tensor a = small_ints({70, 90}, 304);
                 a.index_put_({5, 7}, NAN);
                 return TensorList{a};
               },
               [](const TensorList& x) {
                 const Tensor& a = x[0];
                 auto [hi, hi_at] = a.max(1);
                 auto [lo, lo_at] = min(a, 0);
                 return TensorList{any(a, 1), all(a.ne(0), 0), count_nonzero(a, std::optional<int64_t>(1)),
                                   hi,        hi_at,           lo,
                                   lo_at,     argmin(a, 1),    a.max()};
               },
               kExact});
  c.push_back({"reduce", "cumsum/cumprod f64 [50,200] dims 0,1 + backward",
               [] { return TensorList{grad_input({50, 200}, 305, kFloat64)}; },
               with_grads([](const TensorList& x) { return x[0].cumsum(1) + cumprod(x[0] * 0.1 + 1, 0); }), kF64});
  c.push_back({"reduce", "median/nanmedian with values and indices f32 [41,63]",
               [] { return TensorList{randn_({41, 63}, 306)}; },
               [](const TensorList& x) {
                 auto [v, i] = x[0].median(1);
                 auto [nv, ni] = nanmedian(x[0], 0);
                 return TensorList{v, i, nv, ni, median(x[0])};
               },
               kExact});
  c.push_back({"reduce", "sum/amax/logsumexp/var fwd+bwd f32 [64,513]",
               [] { return TensorList{grad_input({64, 513}, 307)}; },
               with_grads([](const TensorList& x) {
                 return sum(x[0], {1}) + amax(x[0], {1}) + logsumexp(x[0], {1}) + var(x[0], {1}) + x[0].norm(2, {1});
               }),
               kF32Reduce});
  c.push_back({"linalg", "addmm/baddbmm/addbmm fwd+bwd f32",
               [] {
                 return TensorList{grad_input({40}, 308), grad_input({33, 17}, 309), grad_input({17, 40}, 310),
                                   grad_input({4, 33, 17}, 311), grad_input({4, 17, 40}, 312)};
               },
               with_grads([](const TensorList& x) {
                 return addmm(x[0], x[1], x[2], 0.5, 2) + baddbmm(x[0], x[3], x[4], 1, -1).sum(0) +
                        addbmm(x[0], x[3], x[4]);
               }),
               kF32Reduce});
  c.push_back({"linalg", "einsum/tensordot/dot/mv/outer fwd+bwd f64",
               [] {
                 return TensorList{grad_input({5, 6, 7}, 313, kFloat64), grad_input({7, 6, 3}, 314, kFloat64),
                                   grad_input({6}, 315, kFloat64)};
               },
               with_grads([](const TensorList& x) {
                 Tensor e = einsum("ijk,kjl->il", {x[0], x[1]}) + tensordot(x[0], x[1], {1, 2}, {1, 0});
                 Tensor v = mv(x[0].sum(2), x[2]);
                 return e + outer(v, x[1].sum({0, 1})) + dot(x[2], x[2]);
               }),
               kF64});
}

}  // namespace gr::selftest
