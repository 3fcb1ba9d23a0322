// conv2d: outputs and gradients against PyTorch (tests/data/conv_reference.json, which also
// holds matmul references), float64 gradcheck over stride/padding/dilation/groups and
// non-contiguous inputs, minibatch chunking, and the argument errors.
#include <initializer_list>

#include "conv_test_util.h"

using namespace gr;
using autograd::gradcheck;
using test::ints;

namespace {

Tensor r(std::vector<int64_t> shape, uint64_t seed) {
  Generator g(seed);
  return randn(shape, TensorOptions(kFloat64), &g).requires_grad_(true);
}

template <class F>
void for_each_algorithm(F body) {
  test::for_each_conv_algorithm(body);
}

const nlohmann::json& reference() { return test::conv_reference(); }

struct ConvShape {
  std::vector<int64_t> x, w, stride, padding, dilation;
  int64_t groups;
};

// Output and input, weight and bias gradients of a float32 convolution of shape s under each
// of `algos` agree with im2col's.
void check_against_im2col(const ConvShape& s, std::initializer_list<backends::cpu::Conv2dAlgorithm> algos) {
  CAPTURE(s.x);
  CAPTURE(s.w);
  Tensor x = randn(s.x), w = randn(s.w), b = randn({s.w[0]});
  Tensor y0 = conv2d(x, w, b, s.stride, s.padding, s.dilation, s.groups);
  Tensor gy = randn(y0.sizes());
  auto run = [&](backends::cpu::Conv2dAlgorithm algo) {
    backends::cpu::set_conv2d_algorithm(algo);
    Tensor xi = x.detach().requires_grad_(true), wi = w.detach().requires_grad_(true),
           bi = b.detach().requires_grad_(true);
    Tensor y = conv2d(xi, wi, bi, s.stride, s.padding, s.dilation, s.groups);
    y.backward(gy);
    backends::cpu::set_conv2d_algorithm(backends::cpu::Conv2dAlgorithm::kAuto);
    return TensorList{y.detach(), xi.grad(), wi.grad(), bi.grad()};
  };
  TensorList ref = run(backends::cpu::Conv2dAlgorithm::kIm2col);
  for (auto algo : algos) {
    CAPTURE(static_cast<int>(algo));
    TensorList got = run(algo);
    for (size_t i = 0; i < ref.size(); ++i) {
      CAPTURE(i);
      CHECK(got[i].allclose(ref[i], 1e-4, 1e-3));
    }
  }
}

}  // namespace

TEST_CASE("conv2d matches PyTorch: output and input, weight, bias gradients (float64)") {
  for_each_algorithm([] {
  for (const auto& c : reference().at("conv2d")) {
    CAPTURE(c.at("name").get<std::string>());
    Tensor x = test::tensor_from_json(c.at("input")).detach().requires_grad_(true);
    Tensor w = test::tensor_from_json(c.at("weight")).detach().requires_grad_(true);
    Tensor b = c.contains("bias") ? test::tensor_from_json(c.at("bias")).detach().requires_grad_(true) : Tensor();
    std::vector<int64_t> stride = ints(c.at("stride")), padding = ints(c.at("padding")),
                         dilation = ints(c.at("dilation"));
    Tensor y = conv2d(x, w, b, stride, padding, dilation, c.at("groups").get<int64_t>());
    test::check_close(y, test::tensor_from_json(c.at("output")), 1e-10);
    y.backward(test::tensor_from_json(c.at("grad_output")));
    test::check_close(x.grad(), test::tensor_from_json(c.at("grad_input")), 1e-10);
    test::check_close(w.grad(), test::tensor_from_json(c.at("grad_weight")), 1e-10);
    if (b.defined()) test::check_close(b.grad(), test::tensor_from_json(c.at("grad_bias")), 1e-10);
  }
  });
}

TEST_CASE("conv2d float32 matches the PyTorch float64 reference to float precision") {
  for_each_algorithm([] {
  for (const auto& c : reference().at("conv2d")) {
    CAPTURE(c.at("name").get<std::string>());
    Tensor x = test::tensor_from_json(c.at("input"), kFloat32).detach().requires_grad_(true);
    Tensor w = test::tensor_from_json(c.at("weight"), kFloat32).detach().requires_grad_(true);
    Tensor b = c.contains("bias") ? test::tensor_from_json(c.at("bias"), kFloat32) : Tensor();
    Tensor y = conv2d(x, w, b, ints(c.at("stride")), ints(c.at("padding")), ints(c.at("dilation")),
                      c.at("groups").get<int64_t>());
    test::check_close(y, test::tensor_from_json(c.at("output")), 1e-4);
    y.backward(test::tensor_from_json(c.at("grad_output"), kFloat32));
    test::check_close(x.grad(), test::tensor_from_json(c.at("grad_input")), 1e-4);
    test::check_close(w.grad(), test::tensor_from_json(c.at("grad_weight")), 1e-4);
  }
  });
}

TEST_CASE("matmul matches PyTorch: 2-D, vectors and batched broadcasting, with gradients") {
  for (const auto& c : reference().at("matmul")) {
    CAPTURE(c.at("name").get<std::string>());
    Tensor a = test::tensor_from_json(c.at("a")).detach().requires_grad_(true);
    Tensor b = test::tensor_from_json(c.at("b")).detach().requires_grad_(true);
    Tensor out = matmul(a, b);
    test::check_close(out, test::tensor_from_json(c.at("output")), 1e-10);
    out.backward(test::tensor_from_json(c.at("grad_output")));
    test::check_close(a.grad(), test::tensor_from_json(c.at("grad_a")), 1e-10);
    test::check_close(b.grad(), test::tensor_from_json(c.at("grad_b")), 1e-10);
  }
}

TEST_CASE("gradcheck: conv2d input, weight and bias") {
  auto conv = [](IntArrayRef s, IntArrayRef p, IntArrayRef d, int64_t g) {
    std::vector<int64_t> sv = s.vec(), pv = p.vec(), dv = d.vec();
    return std::function<Tensor(const TensorList&)>(
        [=](const TensorList& t) { return conv2d(t[0], t[1], t[2], sv, pv, dv, g); });
  };
  // A leaf that is an NHWC buffer viewed as NCHW, and a weight that is a transposed buffer.
  Generator gen(21);
  Tensor xnc = randn({2, 5, 4, 3}, TensorOptions(kFloat64), &gen).permute({0, 3, 1, 2}).detach().requires_grad_(true);
  Tensor wnc = randn({3, 2, 3, 3}, TensorOptions(kFloat64), &gen).transpose(0, 1).detach().requires_grad_(true);
  REQUIRE_FALSE(xnc.is_contiguous());
  REQUIRE_FALSE(wnc.is_contiguous());
  struct Case {
    const char* name;
    std::function<Tensor(const TensorList&)> f;
    TensorList inputs;
  };
  const std::vector<Case> cases = {
      {"plain", conv({1}, {0}, {1}, 1), {r({2, 2, 5, 4}, 1), r({3, 2, 3, 2}, 2), r({3}, 3)}},
      {"stride and padding", conv({2, 1}, {1, 2}, {1}, 1), {r({2, 2, 5, 5}, 4), r({2, 2, 3, 3}, 5), r({2}, 6)}},
      {"dilation", conv({1}, {1}, {2, 1}, 1), {r({1, 2, 6, 5}, 7), r({2, 2, 2, 3}, 8), r({2}, 9)}},
      {"groups", conv({1}, {1}, {1}, 2), {r({2, 4, 4, 4}, 10), r({4, 2, 3, 3}, 11), r({4}, 12)}},
      {"depthwise, stride 2", conv({2}, {1}, {1}, 3), {r({1, 3, 5, 5}, 13), r({3, 1, 3, 3}, 14), r({3}, 15)}},
      {"pointwise 1x1", conv({1}, {0}, {1}, 1), {r({2, 3, 3, 4}, 16), r({2, 3, 1, 1}, 17), r({2}, 18)}},
      {"no bias", [](const TensorList& t) { return conv2d(t[0], t[1], {}, 2, 1); },
       {r({2, 2, 4, 5}, 19), r({3, 2, 2, 2}, 20)}},
      {"non-contiguous input and weight", conv({1}, {1}, {1}, 1), {xnc, wnc, r({2}, 22)}},
      {"weight without grad", conv({1}, {0}, {1}, 1), {r({1, 2, 4, 4}, 23), r({2, 2, 3, 3}, 24).detach(), r({2}, 25)}},
      {"input without grad, no bias", conv({1}, {0}, {1}, 1),
       {r({1, 2, 4, 4}, 23).detach(), r({2, 2, 3, 3}, 26), Tensor()}},
      // 3x3, stride 1 (the Winograd tiling): odd and even output sizes, padding 0 to 3.
      {"3x3 odd/even", conv({1}, {0}, {1}, 1), {r({2, 3, 5, 6}, 27), r({2, 3, 3, 3}, 28), r({2}, 29)}},
      {"3x3 padding 2,1", conv({1}, {2, 1}, {1}, 1), {r({1, 2, 4, 3}, 30), r({3, 2, 3, 3}, 31), r({3}, 32)}},
      {"3x3 padding 3", conv({1}, {3}, {1}, 1), {r({1, 1, 3, 4}, 33), r({2, 1, 3, 3}, 34), r({2}, 35)}},
      {"3x3 groups", conv({1}, {1}, {1}, 2), {r({2, 4, 3, 5}, 36), r({6, 2, 3, 3}, 37), r({6}, 38)}},
  };
  for_each_algorithm([&] {
    for (const Case& c : cases) {
      CAPTURE(c.name);
      CHECK(gradcheck(c.f, c.inputs));
    }
  });
}

TEST_CASE("conv2d gives the same results when the minibatch is cut into im2col chunks") {
  Tensor x = r({5, 3, 7, 6}, 30), w = r({4, 3, 3, 3}, 31), b = r({4}, 32);
  auto run = [&] {
    Tensor xi = x.detach().requires_grad_(true), wi = w.detach().requires_grad_(true),
           bi = b.detach().requires_grad_(true);
    Tensor y = conv2d(xi, wi, bi, 1, 1);
    (y * y).sum().backward();
    return TensorList{y.detach(), xi.grad(), wi.grad(), bi.grad()};
  };
  TensorList whole = run();
  const int64_t saved = backends::cpu::conv2d_workspace_limit();
  backends::cpu::set_conv2d_workspace_limit(2 * 27 * 42 * 8);  // two images' columns per chunk
  TensorList chunked = run();
  backends::cpu::set_conv2d_workspace_limit(0);  // one image per chunk
  TensorList single = run();
  backends::cpu::set_conv2d_workspace_limit(saved);
  for (size_t i = 0; i < whole.size(); ++i) {
    test::check_close(chunked[i], whole[i], 1e-12);
    test::check_close(single[i], whole[i], 1e-12);
  }
}

TEST_CASE("Winograd and im2col agree on float32 convolutions (several chunks, wide rows)") {
  // Several chunks of images; rows of more than 16 tiles (two vector groups per tile row);
  // small planes whose tile rows pair up in one vector (7 tiles a row, odd tile-row count;
  // the benchmark's 13x13), with odd output sizes and asymmetric padding; ResNet-18's 8x8 and
  // 4x4 maps (whole groups of 4 tiles on AVX2) and a map of one tile row.
  struct Shape {
    std::vector<int64_t> x, w, padding;
  };
  for (const Shape& s : {Shape{{7, 16, 30, 29}, {24, 16, 3, 3}, {1, 1}}, Shape{{2, 8, 37, 41}, {8, 8, 3, 3}, {2, 1}},
                         Shape{{3, 8, 12, 15}, {8, 8, 3, 3}, {2, 0}}, Shape{{4, 16, 13, 13}, {16, 16, 3, 3}, {0, 0}},
                         Shape{{2, 8, 5, 9}, {8, 8, 3, 3}, {3, 1}}, Shape{{3, 16, 8, 8}, {8, 16, 3, 3}, {1, 1}},
                         Shape{{5, 8, 4, 4}, {16, 8, 3, 3}, {1, 1}}, Shape{{3, 8, 2, 3}, {8, 8, 3, 3}, {1, 1}}}) {
    Tensor x = randn(s.x), w = randn(s.w), b = randn({s.w[0]});
    Tensor y0 = conv2d(x, w, b, 1, s.padding);
    Tensor gy = randn(y0.sizes());
    auto run = [&](backends::cpu::Conv2dAlgorithm algo) {
      backends::cpu::set_conv2d_algorithm(algo);
      Tensor xi = x.detach().requires_grad_(true), wi = w.detach().requires_grad_(true);
      Tensor y = conv2d(xi, wi, b, 1, s.padding);
      y.backward(gy);
      backends::cpu::set_conv2d_algorithm(backends::cpu::Conv2dAlgorithm::kAuto);
      return TensorList{y.detach(), xi.grad(), wi.grad()};
    };
    TensorList ref = run(backends::cpu::Conv2dAlgorithm::kIm2col), win = run(backends::cpu::Conv2dAlgorithm::kWinograd);
    for (size_t i = 0; i < ref.size(); ++i) CHECK(win[i].allclose(ref[i], 1e-4, 1e-3));
  }
}

TEST_CASE("direct and im2col agree on float32 convolutions (vector rows, tails, padding, strides)") {
  // The first layers of small CNNs (1 or 3 input channels, 5x5 / 3x3 kernels), rows wider than
  // one vector and with tails, vertical stride 2, dilation, groups and asymmetric padding.
  for (const ConvShape& s : {ConvShape{{5, 1, 28, 28}, {32, 1, 5, 5}, {1}, {2}, {1}, 1},
                             ConvShape{{3, 3, 32, 32}, {16, 3, 3, 3}, {1}, {1}, {1}, 1},
                             ConvShape{{2, 1, 37, 19}, {4, 1, 3, 5}, {2, 1}, {1, 3}, {1}, 1},
                             ConvShape{{2, 2, 20, 40}, {6, 1, 3, 3}, {1}, {0, 2}, {2, 1}, 2},
                             ConvShape{{1, 3, 9, 70}, {5, 3, 2, 2}, {3, 1}, {0}, {1, 3}, 1},
                             ConvShape{{4, 1, 6, 5}, {3, 1, 7, 7}, {1}, {3}, {1}, 1}})
    check_against_im2col(s, {backends::cpu::Conv2dAlgorithm::kDirect});
}

TEST_CASE("dense and im2col agree on float32 convolutions (tiny maps, strides, padding, dilation, groups)") {
  // ResNet-18's last stages at 32x32 input (3x3 on 2x2 and 1x1 maps, stride 2 from 2x2), and
  // odd shapes: non-square maps, asymmetric padding and stride, dilation, groups, bias, a
  // kernel larger than the map, and a map with taps that never land (all-padding rows).
  for (const ConvShape& s : {ConvShape{{5, 16, 1, 1}, {24, 16, 3, 3}, {1}, {1}, {1}, 1},
                             ConvShape{{3, 8, 2, 2}, {8, 8, 3, 3}, {1}, {1}, {1}, 1},
                             ConvShape{{3, 8, 2, 2}, {16, 8, 3, 3}, {2}, {1}, {1}, 1},
                             ConvShape{{2, 6, 2, 3}, {9, 2, 3, 3}, {1, 2}, {1, 0}, {1}, 3},
                             ConvShape{{4, 5, 3, 1}, {7, 5, 5, 3}, {1}, {2, 1}, {1}, 1},
                             ConvShape{{2, 4, 5, 4}, {3, 4, 2, 3}, {2, 1}, {1, 2}, {2, 1}, 1},
                             ConvShape{{1, 3, 1, 2}, {4, 3, 7, 7}, {1}, {3}, {1}, 1}})
    check_against_im2col(s, {backends::cpu::Conv2dAlgorithm::kDense, backends::cpu::Conv2dAlgorithm::kAuto});
}

TEST_CASE("conv2d rejects bad arguments with messages naming conv2d and the shapes") {
  Tensor x = randn({2, 4, 5, 5}), w = randn({6, 4, 3, 3});
  auto throws = [](auto f, const char* text) {
    CHECK_THROWS_WITH_AS(f(), doctest::Contains(text), gr::Error);
    CHECK_THROWS_WITH_AS(f(), doctest::Contains("conv2d"), gr::Error);
  };
  // wrong dims
  throws([&] { return conv2d(randn({4, 5, 5}), w); }, "4-D input");
  throws([&] { return conv2d(x, randn({6, 4, 3})); }, "4-D weight");
  // channel mismatch: C_in vs weight C_in * groups
  throws([&] { return conv2d(x, randn({6, 3, 3, 3})); }, "[2, 4, 5, 5] has 4 channels");
  throws([&] { return conv2d(x, randn({6, 4, 3, 3}), {}, 1, 0, 1, 2); }, "expects 8");
  // groups not dividing the channels
  throws([&] { return conv2d(randn({1, 5, 4, 4}), randn({4, 2, 3, 3}), {}, 1, 0, 1, 2); }, "groups=2 must divide");
  throws([&] { return conv2d(x, randn({5, 2, 3, 3}), {}, 1, 0, 1, 2); }, "output channels");
  throws([&] { return conv2d(x, w, {}, 1, 0, 1, 0); }, "groups must be positive");
  // kernel larger than the padded input
  throws([&] { return conv2d(x, randn({6, 4, 7, 3})); }, "larger than the padded input 5x5");
  throws([&] { return conv2d(x, w, {}, 1, 0, 3); }, "(dilated)");
  CHECK_NOTHROW(conv2d(x, randn({6, 4, 7, 3}), {}, 1, 1));
  // dtype and device mismatches
  throws([&] { return conv2d(x, randn({6, 4, 3, 3}, kFloat64)); }, "same dtype");
  throws([&] { return conv2d(x.to(kInt64), w.to(kInt64)); }, "float32 or float64");
  throws([&] { return conv2d(x, w, randn({6}, kFloat64)); }, "bias is float64");
  // bias shape
  throws([&] { return conv2d(x, w, randn({5})); }, "bias must be 1-D with C_out = 6");
  throws([&] { return conv2d(x, w, randn({6, 1})); }, "[6, 1]");
  // stride / padding / dilation lists
  throws([&] { return conv2d(x, w, {}, {1, 1, 1}); }, "stride must have 1 or 2 values");
  throws([&] { return conv2d(x, w, {}, 0); }, "stride must be positive");
  throws([&] { return conv2d(x, w, {}, 1, -1); }, "padding must be non-negative");
  throws([&] { return conv2d(x, w, {}, 1, 0, {1, 0}); }, "dilation must be positive");
}

TEST_CASE("conv2d registers its CPU kernels in the dispatch stubs") {
  // (The CUDA slots are filled by a CUDA build; device mismatches need a device to test.)
  CHECK(native::conv2d_forward_stub.has(kCPU));
  CHECK(native::conv2d_backward_stub.has(kCPU));
}
