// CPU-vs-CUDA parity of max/avg/adaptive-average pooling, forward and backward, exactly:
// the CUDA kernels run pooling.h's per-element functions and gather in the CPU's order
// (tests/core/test_kernel_formulations.cpp checks the same functions against the CPU kernels
// without a device). Padding, dilation, ceil mode, odd sizes, 3-D and non-contiguous inputs.
#include <gradring/core/native/pooling/pooling.h>

#include "parity.h"

using namespace gr;
using namespace gr::cuda_test;
namespace N = gr::native;

namespace {
struct Case {
  std::vector<int64_t> input;
  std::vector<int64_t> kernel, stride, padding, dilation;
  bool ceil_mode;
};
const Case kCases[] = {
    {{8, 16, 28, 28}, {2}, {}, {0}, {1}, false},       // the LeNet/CNN layer
    {{16, 32, 26, 26}, {2}, {}, {0}, {1}, false},      // the seed CNN's first pooling
    {{2, 3, 9, 7}, {2}, {}, {0}, {1}, false},          // odd sizes
    {{2, 4, 17, 15}, {3}, {2}, {1}, {1}, false},       // overlapping windows with padding
    {{1, 3, 10, 11}, {3, 2}, {1, 2}, {1, 0}, {1}, true},
    {{2, 2, 12, 13}, {3}, {2}, {1}, {2}, false},       // dilation (max only)
    {{2, 1, 5, 6}, {2, 3}, {3, 4}, {1}, {1}, true},    // stride beyond the window
    {{3, 11, 5}, {5, 3}, {1}, {2, 1}, {1}, true},      // 3-D input
};
std::string describe(const Case& c, ScalarType t) {
  std::ostringstream s;
  s << dtype_name(t) << " input " << IntArrayRef(c.input) << " kernel " << IntArrayRef(c.kernel) << " stride "
    << IntArrayRef(c.stride) << " padding " << IntArrayRef(c.padding) << " dilation " << IntArrayRef(c.dilation)
    << " ceil " << c.ceil_mode;
  return s.str();
}
std::vector<int64_t> out_shape(const std::vector<int64_t>& in, const N::Pool2dGeometry& g) {
  std::vector<int64_t> s = in;
  s[s.size() - 2] = g.oH;
  s[s.size() - 1] = g.oW;
  return s;
}
}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("max_pool2d values, indices and backward match the CPU exactly") {
    for (const Case& c : kCases) {
      for (ScalarType t : {kFloat32, kFloat64}) {
        const std::string what = "max_pool2d " + describe(c, t);
        // Quarter steps: ties in most windows, so the first-maximum rule is exercised.
        Tensor x = N::to_dtype(random_tensor(c.input, kInt64, 900, -8, 8), t) * 0.25;
        auto geometry = [&](const Tensor& in) {
          return N::pool2d_geometry("max_pool2d", in, c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode);
        };
        Tensor go = random_tensor(out_shape(c.input, geometry(x)), t, 901);
        check_parity(what + " values", {x}, [&](const TensorList& v) { return N::max_pool2d_with_indices(v[0], geometry(v[0])).first; },
                     kExact);
        check_parity(what + " indices", {x},
                     [&](const TensorList& v) { return N::max_pool2d_with_indices(v[0], geometry(v[0])).second; }, kExact);
        check_parity(what + " backward", {x, go},
                     [&](const TensorList& v) {
                       const N::Pool2dGeometry g = geometry(v[0]);
                       return N::max_pool2d_backward(v[1], N::max_pool2d_with_indices(v[0], g).second, v[0].sizes(), g);
                     },
                     kExact);
      }
    }
  }

  TEST_CASE("avg_pool2d forward and backward match the CPU exactly") {
    for (const Case& c : kCases) {
      if (c.dilation != std::vector<int64_t>{1}) continue;
      for (bool include_pad : {true, false}) {
        for (ScalarType t : {kFloat32, kFloat64}) {
          const std::string what = "avg_pool2d " + describe(c, t) + (include_pad ? " count_include_pad" : "");
          Tensor x = random_tensor(c.input, t, 910);
          auto geometry = [&](const Tensor& in) {
            return N::pool2d_geometry("avg_pool2d", in, c.kernel, c.stride, c.padding, {1}, c.ceil_mode);
          };
          Tensor go = random_tensor(out_shape(c.input, geometry(x)), t, 911);
          check_parity(what + " forward", {x}, [&](const TensorList& v) { return N::avg_pool2d(v[0], geometry(v[0]), include_pad); },
                       kExact);
          check_parity(what + " backward", {x, go},
                       [&](const TensorList& v) {
                         return N::avg_pool2d_backward(v[1], v[0].sizes(), geometry(v[0]), include_pad);
                       },
                       kExact);
        }
      }
    }
  }

  TEST_CASE("adaptive_avg_pool2d forward and backward match the CPU exactly") {
    const std::vector<int64_t> out_sizes[] = {{1, 1}, {3, 3}, {4, 5}, {9, 11}};
    for (const auto& os : out_sizes) {
      for (ScalarType t : {kFloat32, kFloat64}) {
        std::ostringstream what;
        what << "adaptive_avg_pool2d " << dtype_name(t) << " output " << IntArrayRef(os);
        Tensor x = random_tensor({4, 6, 7, 9}, t, 920);
        auto geometry = [&](const Tensor& in) { return N::adaptive_pool2d_geometry("adaptive_avg_pool2d", in, os); };
        Tensor go = random_tensor({4, 6, os[0], os[1]}, t, 921);
        check_parity(what.str() + " forward", {x}, [&](const TensorList& v) { return N::adaptive_avg_pool2d(v[0], geometry(v[0])); },
                     kExact);
        check_parity(what.str() + " backward", {x, go},
                     [&](const TensorList& v) { return N::adaptive_avg_pool2d_backward(v[1], v[0].sizes(), geometry(v[0])); },
                     kExact);
      }
    }
  }

  TEST_CASE("pooling of a channels-last view and through autograd") {
    // A permuted [N, H, W, C] view is copied to contiguous planes first.
    check_parity("max_pool2d of a permuted view", {random_tensor({2, 10, 12, 3}, kFloat32, 930)},
                 [](const TensorList& v) { return max_pool2d(N::permute(v[0], {0, 3, 1, 2}), {2}); }, kExact);
    Tensor x = random_tensor({2, 3, 8, 8}, kFloat32, 931);
    auto run = [&](Device dev) {
      Tensor xd = x.to(dev).detach().requires_grad_(true);
      Tensor y = adaptive_avg_pool2d(avg_pool2d(max_pool2d(xd, {3}, {1}, {1}), {2}), {3, 3});
      (y * y).sum().backward();
      return TensorList{y, xd.grad()};
    };
    TensorList want = run(Device(kCPU)), got = run(cuda0());
    check_match(got[0], want[0], Tol{1e-6, 1e-7}, "pooled output");
    check_match(got[1], want[1], Tol{1e-6, 1e-7}, "pooling input gradient");
  }
}
