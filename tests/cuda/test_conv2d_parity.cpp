// CPU-vs-CUDA parity of conv2d forward and backward (input, weight and bias gradients) over
// stride, padding, dilation, groups, 1x1 and single-image problems, on both CUDA paths:
// cuDNN (when built) and the im2col + cuBLAS fallback (forced with set_cudnn_enabled(false)),
// the fallback also with a workspace limit small enough to cut the minibatch into chunks;
// and the algorithm cache (one search per problem and pass), benchmark mode, a zero
// workspace limit, and empty minibatches.
#include <gradring/core/native/conv/conv2d.h>

#include "cuda_kernels/conv2d.h"
#include "parity.h"

using namespace gr;
using namespace gr::cuda_test;
namespace N = gr::native;

namespace {

struct ConvCase {
  const char* name;
  std::vector<int64_t> x, w, stride, padding, dilation;
  int64_t groups;
};

const ConvCase kCases[] = {
    {"3x3 pad 1", {2, 3, 8, 8}, {4, 3, 3, 3}, {1}, {1}, {1}, 1},
    {"3x2 stride (2,1) pad (1,0) groups 2", {3, 4, 9, 7}, {6, 2, 3, 2}, {2, 1}, {1, 0}, {1}, 2},
    {"depthwise dilation (2,1) stride (1,2)", {2, 4, 10, 11}, {4, 1, 3, 3}, {1, 2}, {2}, {2, 1}, 4},
    {"1x1", {4, 8, 6, 6}, {16, 8, 1, 1}, {1}, {0}, {1}, 1},
    {"1x1 stride 2 groups 3", {2, 6, 7, 7}, {6, 2, 1, 1}, {2}, {0}, {1}, 3},
    {"5x5 one image", {1, 3, 5, 5}, {2, 3, 5, 5}, {1}, {2}, {1}, 1},
    {"3x3 wider", {5, 16, 12, 12}, {32, 16, 3, 3}, {1}, {1}, {1}, 1},
};

// Float32 sums run in another order on each device; the weight gradient sums N * L products.
Tol conv_tol(ScalarType t) { return t == kFloat32 ? Tol{5e-4, 5e-4} : Tol{1e-10, 1e-10}; }

// y, gx, gw, gb of one case on x's device (inputs: x, w, b, gy).
TensorList conv_all(const ConvCase& c, const TensorList& in) {
  const N::Conv2dArgs a = N::conv2d_args(in[0], in[1], in[2], c.stride, c.padding, c.dilation, c.groups);
  Tensor y = N::conv2d(a, in[0], in[1], in[2]);
  auto [gx, gw, gb] = N::conv2d_backward(a, in[3], in[0], in[1], {true, true, true});
  return {y, gx, gw, gb};
}

TensorList case_inputs(const ConvCase& c, ScalarType t, uint64_t seed) {
  Tensor x = random_tensor(c.x, t, seed, -1, 1), w = random_tensor(c.w, t, seed + 1, -1, 1);
  Tensor b = random_tensor({c.w[0]}, t, seed + 2, -1, 1);
  const N::Conv2dArgs a = N::conv2d_args(x, w, b, c.stride, c.padding, c.dilation, c.groups);
  return {x, w, b, random_tensor({a.N, a.C_out, a.H_out, a.W_out}, t, seed + 3, -1, 1)};
}

// Runs every case on both devices and compares; `expect` is the path the CUDA run must take
// (kNone: do not check).
void check_cases(const std::string& label, cuda::Conv2dPath expect) {
  for (ScalarType t : {kFloat32, kFloat64}) {
    uint64_t seed = 500;
    for (const ConvCase& c : kCases) {
      const std::string what = label + " " + c.name + " " + std::string(dtype_name(t));
      const TensorList cpu_in = case_inputs(c, t, seed += 10);
      TensorList cuda_in;
      for (const Tensor& v : cpu_in) cuda_in.push_back(native::to_device(v, cuda0()));
      const TensorList want = conv_all(c, cpu_in), got = conv_all(c, cuda_in);
      const char* names[] = {"forward", "grad input", "grad weight", "grad bias"};
      for (size_t i = 0; i < want.size(); ++i) check_match(got[i], want[i], conv_tol(t), what + " " + names[i]);
      if (expect != cuda::Conv2dPath::kNone) {
        INFO(what);
        CHECK(cuda::last_conv2d_path() == expect);  // the backward pass ran last
      }
      // Only one gradient wanted: the other outputs are not touched (they are null).
      const N::Conv2dArgs a =
          N::conv2d_args(cuda_in[0], cuda_in[1], cuda_in[2], c.stride, c.padding, c.dilation, c.groups);
      auto [gx, gw_none, gb_none] = N::conv2d_backward(a, cuda_in[3], Tensor(), cuda_in[1], {true, false, false});
      check_match(gx, want[1], conv_tol(t), what + " grad input alone");
      auto [gx_none, gw, gb] = N::conv2d_backward(a, cuda_in[3], cuda_in[0], Tensor(), {false, true, true});
      check_match(gw, want[2], conv_tol(t), what + " grad weight alone");
      check_match(gb, want[3], conv_tol(t), what + " grad bias with it");
      // Without bias.
      Tensor y = N::conv2d(a, cuda_in[0], cuda_in[1], Tensor());
      Tensor y_cpu = N::conv2d(cpu_in[0], cpu_in[1], Tensor(), c.stride, c.padding, c.dilation, c.groups);
      check_match(y, y_cpu, conv_tol(t), what + " forward without bias");
    }
  }
}

// Restores the conv2d switches at the end of a test.
struct SwitchGuard {
  bool enabled = cuda::cudnn_enabled(), benchmark = cuda::cudnn_benchmark(), tf32 = cuda::cudnn_allow_tf32();
  size_t limit = cuda::conv2d_workspace_limit();
  ~SwitchGuard() {
    cuda::set_cudnn_enabled(enabled);
    cuda::set_cudnn_benchmark(benchmark);
    cuda::set_cudnn_allow_tf32(tf32);
    cuda::set_conv2d_workspace_limit(limit);
  }
};

}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("conv2d on cuDNN matches the CPU") {
    if (!cuda::cudnn_built()) {
      MESSAGE("this build has no cuDNN: only the im2col path is tested");
      return;
    }
    SwitchGuard guard;
    cuda::set_cudnn_enabled(true);
    // float64 may leave a pass to im2col where cuDNN has no double kernel: path not checked.
    check_cases("cudnn", cuda::Conv2dPath::kNone);
    // float32 is supported by cuDNN everywhere here: the whole pass ran on it.
    const TensorList in = case_inputs(kCases[1], kFloat32, 900);
    TensorList d;
    for (const Tensor& v : in) d.push_back(native::to_device(v, cuda0()));
    conv_all(kCases[1], d);
    CHECK(cuda::last_conv2d_path() == cuda::Conv2dPath::kCudnn);
  }

  TEST_CASE("conv2d on im2col + cuBLAS matches the CPU, in one chunk and in many") {
    SwitchGuard guard;
    cuda::set_cudnn_enabled(false);
    check_cases("im2col", cuda::Conv2dPath::kIm2col);
    cuda::set_conv2d_workspace_limit(1);  // one image per chunk (1x1 kernels read x in place)
    check_cases("im2col, one image per chunk", cuda::Conv2dPath::kIm2col);
    cuda::set_conv2d_workspace_limit(2 * 16 * 9 * 144 * 4 + 2 * 32 * 144 * 4);  // two images of "3x3 wider"
    check_cases("im2col, chunks of a few images", cuda::Conv2dPath::kIm2col);
  }

  TEST_CASE("cuDNN algorithms are chosen once per problem and pass") {
    if (!cuda::cudnn_built()) return;
    SwitchGuard guard;
    cuda::set_cudnn_enabled(true);
    cuda::clear_conv2d_algo_cache();
    CHECK(cuda::conv2d_algo_cache_size() == 0);
    const TensorList cpu_in = case_inputs(kCases[0], kFloat32, 700);
    TensorList in;
    for (const Tensor& v : cpu_in) in.push_back(native::to_device(v, cuda0()));
    const ConvCase& c = kCases[0];
    const N::Conv2dArgs a = N::conv2d_args(in[0], in[1], in[2], c.stride, c.padding, c.dilation, c.groups);
    N::conv2d(a, in[0], in[1], in[2]);
    CHECK(cuda::conv2d_algo_cache_size() == 1);  // forward
    N::conv2d(a, in[0], in[1], in[2]);
    CHECK(cuda::conv2d_algo_cache_size() == 1);  // same problem: no new search
    N::conv2d_backward(a, in[3], in[0], in[1], {true, true, true});
    CHECK(cuda::conv2d_algo_cache_size() == 3);  // + backward data, backward filter
    N::conv2d_backward(a, in[3], in[0], in[1], {true, true, true});
    CHECK(cuda::conv2d_algo_cache_size() == 3);
    Tensor x2 = native::to_device(random_tensor({3, 3, 8, 8}, kFloat32, 701), cuda0());  // another batch size
    N::conv2d(x2, in[1], in[2], c.stride, c.padding, c.dilation, c.groups);
    CHECK(cuda::conv2d_algo_cache_size() == 4);
    N::conv2d(x2, in[1], in[2], {2}, c.padding, c.dilation, c.groups);  // another stride
    CHECK(cuda::conv2d_algo_cache_size() == 5);
    Tensor x64 = native::to_dtype(x2, kFloat64);
    Tensor w64 = native::to_dtype(in[1], kFloat64);
    N::conv2d(x64, w64, Tensor(), {2}, c.padding, c.dilation, c.groups);  // another dtype
    CHECK(cuda::conv2d_algo_cache_size() == 6);
  }

  TEST_CASE("cuDNN with TF32 allowed: float32 convolutions within TF32's rounding of the CPU") {
    if (!cuda::cudnn_built()) return;
    SwitchGuard guard;
    cuda::set_cudnn_enabled(true);
    cuda::set_cudnn_allow_tf32(true);
    const size_t before = cuda::conv2d_algo_cache_size();
    for (const ConvCase& c : {kCases[0], kCases[2], kCases[6]}) {
      const TensorList cpu_in = case_inputs(c, kFloat32, 850);
      TensorList in;
      for (const Tensor& v : cpu_in) in.push_back(native::to_device(v, cuda0()));
      const TensorList want = conv_all(c, cpu_in), got = conv_all(c, in);
      // TF32 keeps 10 mantissa bits of each operand: 2^-11 relative per product.
      for (size_t i = 0; i < want.size(); ++i) check_match(got[i], want[i], Tol{2e-2, 2e-2}, std::string("tf32 ") + c.name);
    }
    CHECK(cuda::conv2d_algo_cache_size() > before);  // TF32 problems are cached apart from FMA ones
  }

  TEST_CASE("cuDNN benchmark mode and a zero workspace limit still match the CPU") {
    if (!cuda::cudnn_built()) return;
    SwitchGuard guard;
    cuda::set_cudnn_enabled(true);
    cuda::set_cudnn_benchmark(true);
    cuda::clear_conv2d_algo_cache();
    for (const ConvCase& c : {kCases[0], kCases[2], kCases[6]}) {
      const TensorList cpu_in = case_inputs(c, kFloat32, 800);
      TensorList in;
      for (const Tensor& v : cpu_in) in.push_back(native::to_device(v, cuda0()));
      const TensorList want = conv_all(c, cpu_in), got = conv_all(c, in);
      for (size_t i = 0; i < want.size(); ++i)
        check_match(got[i], want[i], conv_tol(kFloat32), std::string("benchmark ") + c.name);
    }
    cuda::set_cudnn_benchmark(false);
    cuda::set_conv2d_workspace_limit(0);  // only algorithms without workspace (or im2col, in one-image chunks)
    cuda::clear_conv2d_algo_cache();
    const ConvCase& c = kCases[6];
    const TensorList cpu_in = case_inputs(c, kFloat32, 810);
    TensorList in;
    for (const Tensor& v : cpu_in) in.push_back(native::to_device(v, cuda0()));
    const TensorList want = conv_all(c, cpu_in), got = conv_all(c, in);
    for (size_t i = 0; i < want.size(); ++i) check_match(got[i], want[i], conv_tol(kFloat32), "zero workspace");
  }

  TEST_CASE("conv2d of an empty minibatch on CUDA: empty output, zero weight and bias gradients") {
    SwitchGuard guard;
    for (bool use_cudnn : {true, false}) {
      cuda::set_cudnn_enabled(use_cudnn);
      Tensor x = native::to_device(random_tensor({0, 3, 6, 6}, kFloat32, 1), cuda0());
      Tensor w = native::to_device(random_tensor({4, 3, 3, 3}, kFloat32, 2), cuda0());
      Tensor b = native::to_device(random_tensor({4}, kFloat32, 3), cuda0());
      const N::Conv2dArgs a = N::conv2d_args(x, w, b, {1}, {1}, {1}, 1);
      Tensor y = N::conv2d(a, x, w, b);
      CHECK(y.sizes() == IntArrayRef({0, 4, 6, 6}));
      auto [gx, gw, gb] = N::conv2d_backward(a, y, x, w, {true, true, true});
      CHECK(gx.numel() == 0);
      check_match(gw, zeros({4, 3, 3, 3}), kExact, "empty minibatch grad weight");
      check_match(gb, zeros({4}), kExact, "empty minibatch grad bias");
    }
  }
}
