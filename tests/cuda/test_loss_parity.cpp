// CPU-vs-CUDA parity of nll_loss forward and backward (every reduction, class weights,
// ignore_index, an all-ignored batch, [C] inputs, a non-contiguous input), and the CUDA
// convention for a target out of range: NaN instead of the CPU's error.
#include <gradring/core/native/loss/loss.h>

#include "parity.h"

using namespace gr;
using namespace gr::cuda_test;
namespace N = gr::native;

namespace {
// One block sums the batch in acc_t on CUDA, in a different order than the CPU's loop.
Tol loss_tol(ScalarType t) { return t == kFloat32 ? Tol{1e-6, 1e-7} : Tol{1e-13, 1e-15}; }

const char* name(Reduction r) { return r == kNone ? "none" : r == kMean ? "mean" : "sum"; }
}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("nll_loss forward and backward match the CPU") {
    for (ScalarType t : {kFloat32, kFloat64}) {
      for (int64_t n : {1, 64, 1000, 5003}) {
        const int64_t C = n == 1000 ? 1 : 17;
        for (Reduction r : {kNone, kMean, kSum}) {
          for (bool weighted : {false, true}) {
            for (int64_t ignore : {int64_t{-100}, int64_t{3}}) {
              if (C == 1 && ignore == 3) continue;
              std::ostringstream what;
              what << "nll_loss " << dtype_name(t) << " N " << n << " C " << C << " " << name(r)
                   << (weighted ? " weighted" : "") << " ignore " << ignore;
              Tensor x = random_tensor({n, C}, t, 700, -5, 0);
              Tensor target = random_tensor({n}, kInt64, 701, 0, static_cast<double>(C));
              Tensor w = weighted ? random_tensor({C}, t, 702, 0.1, 2) : Tensor();
              TensorList in{x, target};
              if (weighted) in.push_back(w);
              auto weight_of = [&](const TensorList& v) { return weighted ? v[2] : Tensor(); };
              check_parity(what.str() + " loss", in,
                           [&](const TensorList& v) { return N::nll_loss(v[0], v[1], weight_of(v), r, ignore).first; },
                           loss_tol(t));
              check_parity(what.str() + " total_weight", in,
                           [&](const TensorList& v) { return N::nll_loss(v[0], v[1], weight_of(v), r, ignore).second; },
                           loss_tol(t));
              Tensor go = r == kNone ? random_tensor({n}, t, 703) : random_tensor({}, t, 703);
              in.push_back(go);
              check_parity(what.str() + " grad", in,
                           [&](const TensorList& v) {
                             auto [loss, tw] = N::nll_loss(v[0], v[1], weight_of(v), r, ignore);
                             return N::nll_loss_backward(v.back(), v[0].sizes(), v[1], weight_of(v), r, ignore, tw);
                           },
                           loss_tol(t));
            }
          }
        }
      }
    }
  }

  TEST_CASE("nll_loss: [C] input, all targets ignored, a transposed input") {
    check_parity("nll_loss of a [C] input", {random_tensor({9}, kFloat32, 710), scalar_tensor(int64_t{4}, kInt64)},
                 [](const TensorList& v) { return N::nll_loss(v[0], v[1], {}, kMean, -100).first; }, loss_tol(kFloat32));
    // Mean over nothing is 0/0 = NaN on both devices (check_match treats NaN == NaN).
    Tensor all_ignored = tensor(std::vector<int64_t>{-100, -100, -100});
    check_parity("nll_loss with every target ignored", {random_tensor({3, 5}, kFloat32, 711), all_ignored},
                 [](const TensorList& v) { return N::nll_loss(v[0], v[1], {}, kMean, -100).first; }, kExact);
    check_parity("nll_loss of a transposed input", {random_tensor({6, 40}, kFloat64, 712),
                                                    random_tensor({40}, kInt64, 713, 0, 6)},
                 [](const TensorList& v) { return N::nll_loss(N::transpose(v[0], 0, 1), v[1], {}, kSum, -100).first; },
                 loss_tol(kFloat64));
  }

  TEST_CASE("nll_loss on CUDA: a target out of range gives NaN, not an error") {
    // The CPU throws; a kernel cannot without a host sync, so that sample poisons the loss.
    Tensor x = random_tensor({4, 3}, kFloat32, 720).to(cuda0());
    Tensor target = tensor(std::vector<int64_t>{0, 5, 1, 2}).to(cuda0());
    auto [per_sample, tw] = N::nll_loss(x, target, {}, kNone, -100);
    const std::vector<double> v = as_doubles(per_sample);
    CHECK(!std::isnan(v[0]));
    CHECK(std::isnan(v[1]));
    CHECK(std::isnan(as_doubles(N::nll_loss(x, target, {}, kMean, -100).first)[0]));
    Tensor grad = N::nll_loss_backward(scalar_tensor(1.0, kFloat32).to(cuda0()), x.sizes(), target, {}, kSum, -100, tw);
    const std::vector<double> g = as_doubles(grad);
    CHECK(std::isnan(g[3]));    // row 1
    CHECK(g[0] == -1.0);        // row 0, target 0
    CHECK(!std::isnan(g[6]));   // row 2
  }
}
