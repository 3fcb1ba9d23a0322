// gpu_selftest checks of the shape and indexing family: gather/scatter and index_select/
// index_add (forward and backward), masks, advanced indexing and index_put_ (accumulate),
// nonzero, sort/topk and the copies (flip, roll, tril, repeat). Index tensors are inputs, so
// they travel to the device with the data.
#include <cmath>

#include "selftest/checks.h"

namespace gr::selftest {

namespace {
Tensor ints(int64_t high, IntArrayRef shape, uint64_t seed) {
  Generator g(seed);
  return randint(0, high, shape, kInt64, &g);
}
Tensor bools(IntArrayRef shape, uint64_t seed) { return randn_(shape, seed).gt(0); }
}  // namespace

GR_SELFTEST_CHECKS(add_index_checks) {
  c.push_back({"index", "gather dim 1 + scatter_add fwd+bwd f32 [512,100] idx [512,7]",
               [] { return TensorList{grad_input({512, 100}, 200), ints(100, {512, 7}, 201), grad_input({512, 7}, 202)}; },
               with_grads([](const TensorList& x) {
                 return x[0].gather(1, x[1]).sum() + zeros({512, 100}, x[0].options()).scatter_add(1, x[1], x[2]).pow(2).sum();
               }),
               kF32Reduce});
  c.push_back({"index", "gather/scatter f64 dim 0, strided self, value and multiply reduce",
               [] {
                 // Distinct rows per column, so that plain scatter writes each element once.
                 Tensor rows = randn_({30, 40}, 204).argsort(int64_t{0}).narrow(0, 0, 25);
                 return TensorList{randn_({40, 30}, 203, kFloat64), rows, randn_({25, 40}, 205, kFloat64)};
               },
               [](const TensorList& x) {
                 Tensor s = x[0].t();
                 return TensorList{s.gather(0, x[1]), s.scatter(0, x[1], x[2]), s.scatter(0, x[1], 1.5),
                                   s.scatter(0, x[1].narrow(0, 0, 1), x[2], "multiply")};
               },
               kF64});
  c.push_back({"index", "index_select (embedding) + index_add fwd+bwd f32 [1000,64] ids [4096]",
               [] { return TensorList{grad_input({1000, 64}, 206), ints(1000, {4096}, 207)}; },
               with_grads([](const TensorList& x) { return x[0].index_select(0, x[1]).pow(2).sum(); }), kF32Reduce});
  c.push_back({"index", "index_copy/index_fill/index_add alpha f64 dim 1",
               [] { return TensorList{randn_({6, 9}, 208, kFloat64), randn_({6, 3}, 209, kFloat64)}; },
               [](const TensorList& x) {
                 Tensor i = tensor({8, 0, 4}, TensorOptions(kInt64).device(x[0].device()));
                 return TensorList{x[0].index_copy(1, i, x[1]), x[0].index_fill(1, i, -3.0), x[0].index_add(1, i, x[1], 2.0)};
               },
               kF64});
  c.push_back({"index", "masked_fill (attention mask) / masked_select / masked_scatter f32 [8,4,64,64]",
               [] { return TensorList{randn_({8, 4, 64, 64}, 210), bools({64, 64}, 211), randn_({8 * 4 * 64 * 64}, 212)}; },
               [](const TensorList& x) {
                 Tensor m = x[1].expand({8, 4, 64, 64});
                 return TensorList{x[0].masked_fill(x[1], -1e9), x[0].masked_select(x[1]), x[0].masked_scatter(m, x[2])};
               },
               kExact});
  c.push_back({"index", "advanced index (separated tensors, mask) + index_put_ accumulate fwd+bwd f64",
               [] { return TensorList{grad_input({5, 6, 7}, 213, kFloat64), ints(5, {3, 4}, 214), ints(7, {4}, 215)}; },
               with_grads([](const TensorList& x) {
                 Tensor a = x[0].index({x[1], indexing::Slice(), x[2]});
                 Tensor b = x[0].index({x[0].gt(0.5)});
                 return a.pow(2).sum() + b.sum();
               }),
               kF64});
  c.push_back({"index", "index_put_ with accumulate (repeated positions) and nonzero i64/f32",
               [] { return TensorList{randn_({50, 20}, 216), ints(50, {3000}, 217), ints(20, {3000}, 218), randn_({3000}, 219)}; },
               [](const TensorList& x) {
                 Tensor y = x[0].clone();
                 y.index_put_({x[1], x[2]}, x[3], true);
                 return TensorList{y, x[0].gt(1).nonzero(), where(x[0].gt(1))[1]};
               },
               kF32Reduce});
  c.push_back({"index", "sort/argsort/topk f32 [64,1000] (distinct values), NaN last",
               [] {
                 Tensor v = randperm(64 * 1000).to(kFloat32).reshape({64, 1000});
                 v.index_put_({0, 3}, NAN);
                 return TensorList{v};
               },
               [](const TensorList& x) {
                 auto [sv, si] = x[0].sort(-1);
                 auto [dv, di] = x[0].sort(0, true);
                 auto [tv, ti] = x[0].topk(5);
                 return TensorList{sv, si, dv, di, x[0].argsort(true, int64_t{1}), tv, ti};
               },
               kExact});
  c.push_back({"index", "flip/roll/tril/triu/repeat/diag f32 [16,33,17]",
               [] { return TensorList{grad_input({16, 33, 17}, 220)}; },
               with_grads([](const TensorList& x) {
                 return x[0].flip({0, 2}).roll({3, -5}, {1, 2}).tril(-2).triu(-9).repeat({1, 2, 1}).sum() +
                        x[0].select(0, 0).diag(1).sum() + diag(x[0].select(2, 0).select(0, 1)).pow(2).sum();
               }),
               kF32Reduce});
}

}  // namespace gr::selftest
