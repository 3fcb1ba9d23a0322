// CPU-vs-CUDA parity of the five batch-norm kernels (SyncBatchNorm's statistics path too):
// statistics of shifted data (double accumulators on both sides), both element-wise launch
// shapes (long planes, S = 1), optional weight/bias, running-stat updates, a permuted input,
// and BatchNorm through autograd in training mode.
#include <gradring/core/native/norm/batch_norm.h>

#include "parity.h"

using namespace gr;
using namespace gr::cuda_test;
namespace N = gr::native;

namespace {
// Reductions in double on both sides (different orders); the element-wise passes may fuse a
// multiply-add on CUDA.
Tol stat_tol(ScalarType t) { return t == kFloat32 ? Tol{1e-6, 1e-7} : Tol{1e-12, 1e-14}; }
Tol elem_tol(ScalarType t) { return t == kFloat32 ? Tol{1e-5, 5e-6} : Tol{1e-12, 1e-13}; }

const std::vector<int64_t> kShapes[] = {
    {8, 16, 12, 12},  // planes of 144: the flat launch
    {64, 4, 26, 26},  // 43,264 values per channel: several chunks per channel, then the finishing pass
    {2048, 3},        // BatchNorm1d, long channels of stride 3
    {4, 3, 33, 31},   // odd planes longer than a block: one row of blocks per plane
    {256, 10},        // BatchNorm1d after a Linear layer: S = 1
    {3, 5, 7},
    {1, 2, 1000},     // one sample
};

int64_t count_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (d != 1) n *= shape[d];
  return n;
}
}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("batch-norm statistics, normalisation and backward pieces match the CPU") {
    for (const auto& shape : kShapes) {
      for (ScalarType t : {kFloat32, kFloat64}) {
        std::ostringstream what;
        what << dtype_name(t) << " shape " << IntArrayRef(shape) << " ";
        const int64_t C = shape[1];
        // Statistics of data with a large common offset: the shift keeps the variance accurate
        // on both devices.
        Tensor far = random_tensor(shape, t, 800, 999, 1001);
        const double eps = 1e-5;
        check_parity(what.str() + "mean", {far}, [&](const TensorList& v) { return N::batch_norm_stats(v[0], eps).first; },
                     stat_tol(t));
        check_parity(what.str() + "invstd", {far},
                     [&](const TensorList& v) { return N::batch_norm_stats(v[0], eps).second; }, stat_tol(t));
        // The element-wise passes on data near 0: there, in * alpha + beta cancels little, so a
        // multiply-add fused on one device only stays at the result's rounding.
        Tensor x = random_tensor(shape, t, 806, 1, 5), dy = random_tensor(shape, t, 801);
        Tensor w = random_tensor({C}, t, 802, 0.5, 1.5), b = random_tensor({C}, t, 803);
        for (bool affine : {true, false}) {
          const std::string a = affine ? "affine " : "";
          auto weight = [&](const TensorList& v) { return affine ? v[2] : Tensor(); };
          auto bias = [&](const TensorList& v) { return affine ? v[3] : Tensor(); };
          check_parity(what.str() + a + "elemt", {x, dy, w, b},
                       [&](const TensorList& v) {
                         auto [mean, invstd] = N::batch_norm_stats(v[0], eps);
                         return N::batch_norm_elemt(v[0], weight(v), bias(v), mean, invstd);
                       },
                       elem_tol(t));
          for (int piece = 0; piece < 4; ++piece) {
            check_parity(what.str() + a + "backward_reduce " + std::to_string(piece), {x, dy, w, b},
                         [&](const TensorList& v) {
                           auto [mean, invstd] = N::batch_norm_stats(v[0], eps);
                           N::BatchNormBackwardReduce r = N::batch_norm_backward_reduce(v[1], v[0], mean, invstd, affine, affine);
                           const Tensor pieces[] = {r.sum_dy, r.sum_dy_xmu, affine ? r.grad_weight : r.sum_dy,
                                                    affine ? r.grad_bias : r.sum_dy};
                           return pieces[piece];
                         },
                         t == kFloat32 ? Tol{1e-5, 1e-5} : Tol{1e-12, 1e-12});
          }
          check_parity(what.str() + a + "backward_elemt", {x, dy, w, b},
                       [&](const TensorList& v) {
                         auto [mean, invstd] = N::batch_norm_stats(v[0], eps);
                         N::BatchNormBackwardReduce r = N::batch_norm_backward_reduce(v[1], v[0], mean, invstd, false, false);
                         return N::batch_norm_backward_elemt(v[1], v[0], mean, invstd, weight(v), r.sum_dy, r.sum_dy_xmu,
                                                             count_of(shape));
                       },
                       t == kFloat32 ? Tol{1e-4, 1e-5} : Tol{1e-11, 1e-12});
        }
        for (int which = 0; which < 2; ++which) {
          check_parity(what.str() + (which == 0 ? "running_mean" : "running_var"),
                       {x, random_tensor({C}, t, 804), random_tensor({C}, t, 805, 0.5, 2)},
                       [&](const TensorList& v) {
                         auto [mean, invstd] = N::batch_norm_stats(v[0], eps);
                         Tensor rm = N::clone(v[1]), rv = N::clone(v[2]);
                         N::batch_norm_update_stats(rm, rv, mean, invstd, 0.1, eps, count_of(shape));
                         return which == 0 ? rm : rv;
                       },
                       t == kFloat32 ? Tol{1e-5, 1e-6} : Tol{1e-12, 1e-13});
        }
      }
    }
  }

  TEST_CASE("batch-norm statistics of a permuted input and of an empty batch") {
    check_parity("stats of a permuted [N, H, W, C] input", {random_tensor({4, 9, 9, 6}, kFloat32, 810)},
                 [](const TensorList& v) { return N::batch_norm_stats(N::permute(v[0], {0, 3, 1, 2}), 1e-5).second; },
                 Tol{1e-5, 1e-7});
    check_parity("stats of an empty batch", {random_tensor({0, 4, 3}, kFloat32, 811)},
                 [](const TensorList& v) { return N::batch_norm_stats(v[0], 1e-5).second; }, kExact);
  }

  TEST_CASE("batch_norm in training mode through autograd matches the CPU") {
    Tensor x = random_tensor({6, 4, 5, 5}, kFloat32, 820), w = random_tensor({4}, kFloat32, 821, 0.5, 1.5);
    Tensor b = random_tensor({4}, kFloat32, 822);
    auto run = [&](Device dev) {
      Tensor xd = x.to(dev).detach().requires_grad_(true);
      Tensor wd = w.to(dev).detach().requires_grad_(true), bd = b.to(dev).detach().requires_grad_(true);
      Tensor rm = zeros({4}, TensorOptions(kFloat32).device(dev)), rv = ones({4}, TensorOptions(kFloat32).device(dev));
      Tensor y = batch_norm(xd, wd, bd, rm, rv, true, 0.1, 1e-5);
      (y * y).sum().backward();
      return TensorList{y, xd.grad(), wd.grad(), bd.grad(), rm, rv};
    };
    TensorList want = run(Device(kCPU)), got = run(cuda0());
    const char* names[] = {"output", "grad input", "grad weight", "grad bias", "running_mean", "running_var"};
    for (size_t i = 0; i < want.size(); ++i) check_match(got[i], want[i], Tol{1e-4, 1e-5}, names[i]);
  }
}
