// gpu_selftest checks of the core API family: conversions between every pair of dtypes,
// int8/int16/int32 arithmetic and reductions, bfloat16/float16 math, the random ops (same
// Philox stream on both devices), non-blocking copies from pinned memory, and the new dtypes
// through the other families' kernels (math, sort, indexing with int32 indices).
#include "selftest/checks.h"

namespace gr::selftest {

namespace {
constexpr ScalarType kAllDtypes[] = {kFloat32, kFloat64, kInt64, kUInt8, kBool,
                                     kBFloat16, kFloat16, kInt32, kInt16, kInt8};
// Finite values that probe the conversions' edges (no NaN: the comparison treats it as a miss).
Tensor edge_values() {
  return tensor({0.0, -0.5, 1.5, -1.5, 127.9, -128.9, 255.5, 300.0, -300.0, 40000.0, 70000.0, 65520.0, 3e9, -3e9, 1e20,
                 -1e20, 1e-8, 0.3333333333333333},
                kFloat64);
}
Tensor ints(IntArrayRef shape, int64_t low, int64_t high, uint64_t seed, ScalarType dtype) {
  Generator g(seed);
  return randint(low, high, shape, TensorOptions(dtype), &g);
}
}  // namespace

GR_SELFTEST_CHECKS(add_coreapi_checks) {
  c.push_back({"convert", "every dtype to every dtype (out-of-range floats to integers) [18]",
               [] { return TensorList{edge_values()}; },
               [](const TensorList& x) {
                 TensorList out;
                 for (ScalarType from : kAllDtypes)
                   for (ScalarType to : kAllDtypes) out.push_back(x[0].to(from).to(to).to(kFloat64));
                 return out;
               },
               kExact});
  c.push_back({"elementwise", "int8/int16/int32/uint8 add/mul/sub/lt/maximum/where, mixed dtypes [1000]",
               [] {
                 return TensorList{ints({1000}, -128, 128, 1, kInt8), ints({1000}, -30000, 30000, 2, kInt16),
                                   ints({1000}, -1 << 30, 1 << 30, 3, kInt32), ints({1000}, 0, 256, 4, kUInt8)};
               },
               [](const TensorList& x) {
                 return TensorList{x[0] + x[3],         x[0] * x[0],          x[1] - x[2],    x[0].lt(x[3]),
                                   maximum(x[1], x[0]), where(x[0].gt(x[3]), x[0], x[3]), x[2] * 3, x[0] / x[3]};
               },
               kExact});
  c.push_back({"reduce", "sum/max/argmax of int8/int16/int32 [257,131]",
               [] { return TensorList{ints({257, 131}, -100, 100, 5, kInt8), ints({257, 131}, -9999, 9999, 6, kInt32)}; },
               [](const TensorList& x) {
                 auto [m, i] = max(x[1], 1);
                 return TensorList{x[0].sum(), sum(x[0].to(kInt16), {0}), sum(x[1], {1}), m, i, argmax(x[0], 0)};
               },
               kExact});
  c.push_back({"elementwise", "bfloat16/float16 math in float32, rounded per op [64,33]",
               [] { return TensorList{randn_({64, 33}, 7).to(kBFloat16), randn_({64, 33}, 8).to(kFloat16)}; },
               [](const TensorList& x) {
                 return TensorList{x[0] + x[0] * 3, x[0].exp(), x[1] * x[1] - 1, x[1].sigmoid(), x[0] / (x[0].abs() + 1)};
               },
               Tol{1e-2, 1e-6}});  // exp/sigmoid: CUDA's float32 results may round to the next bfloat16
  c.push_back({"reduce", "bfloat16/float16 sum/mean/var/softmax/mm (float32 inside) [64,33]",
               [] { return TensorList{randn_({64, 33}, 9).to(kBFloat16), randn_({33, 17}, 10).to(kBFloat16)}; },
               [](const TensorList& x) {
                 return TensorList{x[0].sum(), x[0].mean({0}), x[0].var(), softmax(x[0], 1), mm(x[0], x[1]),
                                   x[0].to(kFloat16).sum({1})};
               },
               Tol{1e-2, 1e-2}});
  c.push_back({"random", "uniform_/bernoulli_/random_/randint_like/bernoulli(p) [10007] (same Philox stream)",
               [] { return TensorList{zeros({10007}), rand({10007}, kFloat64)}; },
               [](const TensorList& x) {
                 Generator g(31);
                 Tensor u = empty_like(x[0]), b = empty_like(x[0], kBool), r = empty_like(x[0], kInt16);
                 u.uniform_(-2, 3, &g);
                 b.bernoulli_(0.3, &g);
                 r.random_(-1000, 1000, &g);
                 return TensorList{u, b, r, randint_like(x[0], 7, kInt8, &g), bernoulli(x[1], &g)};
               },
               kExact});
  c.push_back({"random", "normal_/exponential_/log_normal_/randn_like f32 and f64 [4099] (same stream)",
               [] { return TensorList{zeros({4099}), zeros({4099}, kFloat64)}; },
               [](const TensorList& x) {
                 Generator g(32);
                 Tensor n = empty_like(x[0]), e = empty_like(x[1]), l = empty_like(x[1]);
                 n.normal_(1, 2, &g);
                 e.exponential_(3, &g);
                 l.log_normal_(0, 0.5, &g);
                 return TensorList{n, e, l, randn_like(x[1], TensorOptions(), &g)};
               },
               Tol{1e-5, 1e-6}});
  c.push_back({"random", "multinomial with and without replacement [8,1000] (same stream)",
               [] { return TensorList{rand({8, 1000}, kFloat32).pow(3.0)}; },
               [](const TensorList& x) {
                 Generator g(33);
                 return TensorList{x[0].multinomial(500, true, &g), x[0].multinomial(300, false, &g),
                                   multinomial(x[0][0], 1000, false, &g)};
               },
               kExact});
  c.push_back({"index", "int8/int16/int32 through the math, sort and index kernels, int32 indices [300,40]",
               [] {
                 return TensorList{ints({300, 40}, -128, 128, 12, kInt8), ints({500}, 0, 300, 13, kInt32),
                                   ints({300, 40}, 0, 300, 14, kInt32)};
               },
               [](const TensorList& x) {
                 const Tensor& a = x[0];
                 return TensorList{a.abs(),
                                   a.clamp(-50, 60),
                                   a.remainder(7),
                                   a.bitwise_xor(a.flip({0})),
                                   std::get<0>(a.to(kInt16).sort(1)),
                                   a.index_select(0, x[1]),
                                   a.gather(0, x[2]),
                                   a.to(kInt32).index({x[1]}),
                                   a.to(kInt16).scatter_add(0, x[2], a.to(kInt16))};
               },
               kExact});
  c.push_back({"elementwise", "bfloat16/float16 sin/atan2/erfinv/floor in float32, rounded per op [300,40]",
               [] { return TensorList{randn_({300, 40}, 15).to(kBFloat16), (rand({300, 40}) * 1.8 - 0.9).to(kFloat16)}; },
               [](const TensorList& x) {
                 return TensorList{x[0].sin(), x[0].atan2(x[0].flip({1})), x[1].erfinv(), (x[0] * 4).floor(),
                                   x[1].clamp(-0.5, 0.5)};
               },
               Tol{1e-2, 1e-6}});  // CUDA's float32 results may round to the neighbouring reduced float
  c.push_back({"convert", "to(device, non_blocking) from pinned memory, copy_(non_blocking) [1 << 20]",
               [] { return TensorList{randn_({1 << 20}, 11)}; },
               [](const TensorList& x) {
                 if (!x[0].is_cuda()) return TensorList{x[0], x[0].to(kFloat64)};
                 Tensor pinned = pin_memory(x[0].cpu());
                 Tensor a = pinned.to(x[0].device(), /*non_blocking=*/true);
                 Tensor b = empty({1 << 20}, TensorOptions(kFloat64).device(x[0].device()));
                 b.copy_(pinned, /*non_blocking=*/true);  // converted on the device after the copy
                 return TensorList{a, b};
               },
               kExact});
}

}  // namespace gr::selftest
