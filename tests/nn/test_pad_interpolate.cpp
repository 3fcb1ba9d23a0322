// F::pad, the padding modules, F::interpolate and Upsample against PyTorch
// (tests/data/shape_reference.json, make_shape_reference.py): outputs and input gradients in
// float64, interpolation outputs in float32 too (the coordinate rules round in float); the
// modules' pretty_print as libtorch's, and the errors.
#include <sstream>

#include "reference_util.h"

using namespace gr;
namespace F = gr::nn::functional;
using gr::test::check_close;
using gr::test::error_of;
using gr::test::load_reference;
using gr::test::tensor_from_json;

namespace {

F::PadFuncOptions::mode_t pad_mode(const std::string& m) {
  if (m == "reflect") return kReflect;
  if (m == "replicate") return kReplicate;
  if (m == "circular") return kCircular;
  return kConstant;
}

F::InterpolateFuncOptions::mode_t interp_mode(const std::string& m) {
  if (m == "linear") return kLinear;
  if (m == "bilinear") return kBilinear;
  if (m == "trilinear") return kTrilinear;
  if (m == "area") return kArea;
  if (m == "nearest-exact") return kNearestExact;
  return kNearest;
}

F::InterpolateFuncOptions interp_options(const nlohmann::json& c) {
  auto o = F::InterpolateFuncOptions().mode(interp_mode(c.at("mode")));
  if (!c.at("size").is_null()) o.size(c.at("size").get<std::vector<int64_t>>());
  if (!c.at("scale_factor").is_null()) o.scale_factor(c.at("scale_factor").get<std::vector<double>>());
  if (!c.at("align_corners").is_null()) o.align_corners(c.at("align_corners").get<bool>());
  if (!c.at("recompute_scale_factor").is_null()) o.recompute_scale_factor(c.at("recompute_scale_factor").get<bool>());
  return o;
}

// Output and input gradient of f against the case's (its `grad_key` entry), for its upstream
// gradient.
void check_case(const nlohmann::json& c, const std::function<Tensor(const Tensor&)>& f, double tol,
                const char* grad_key = "grad_input") {
  Tensor x = tensor_from_json(c.at("input")).requires_grad_(true);
  Tensor out = f(x);
  check_close(out, tensor_from_json(c.at("out")), tol);
  out.backward(tensor_from_json(c.at("grad")));
  check_close(x.grad(), tensor_from_json(c.at(grad_key)), tol);
}

template <class M>
std::string printed(const M& m) {
  std::ostringstream s;
  m->pretty_print(s);
  return s.str();
}

}  // namespace

TEST_CASE("F::pad matches PyTorch: constant, reflect, replicate and circular, outputs and gradients") {
  const nlohmann::json ref = load_reference("shape_reference.json");
  REQUIRE(ref.at("pad").size() >= 16);
  for (const auto& c : ref.at("pad")) {
    const std::string mode = c.at("mode");
    const std::vector<int64_t> pad = c.at("pad");
    INFO("mode ", mode, " pad ", IntArrayRef(pad), " input ", c.at("input").at("shape").dump());
    check_case(c, [&](const Tensor& x) {
      return F::pad(x, F::PadFuncOptions(pad).mode(pad_mode(mode)).value(c.at("value").get<double>()));
    }, 1e-13);
  }
}

TEST_CASE("F::interpolate matches PyTorch in float64 (values, gradients) and float32 (values)") {
  const nlohmann::json ref = load_reference("shape_reference.json");
  REQUIRE(ref.at("interpolate").size() >= 28);
  for (const auto& c : ref.at("interpolate")) {
    INFO("mode ", c.at("mode").get<std::string>(), " input ", c.at("input").at("shape").dump(), " size ",
         c.at("size").dump(), " scale_factor ", c.at("scale_factor").dump(), " align_corners ",
         c.at("align_corners").dump());
    const F::InterpolateFuncOptions o = interp_options(c);
    // Where torch's backward is not its forward's derivative (1-D and 3-D nearest with a scale
    // factor giving out == in or 2 * in: see make_shape_reference.py), gradring's gradient is
    // the derivative.
    const bool torch_exact = c.at("torch_grad_is_derivative");
    check_case(c, [&](const Tensor& x) { return F::interpolate(x, o); }, 1e-12,
               torch_exact ? "grad_input" : "derivative");
    if (!torch_exact) CHECK_FALSE(tensor_from_json(c.at("grad_input")).equal(tensor_from_json(c.at("derivative"))));
    Tensor out32 = F::interpolate(tensor_from_json(c.at("input"), kFloat32), o);
    CHECK(out32.scalar_type() == kFloat32);
    check_close(out32, tensor_from_json(c.at("out_float32")), 1e-6);
  }
}

TEST_CASE("Padding modules: forward is F::pad with their mode; pretty_print as libtorch's") {
  Tensor x = randn({2, 3, 4, 5});
  CHECK(nn::ReflectionPad2d(nn::ReflectionPad2dOptions({1, 2, 3, 0}))->forward(x).equal(
      F::pad(x, F::PadFuncOptions({1, 2, 3, 0}).mode(kReflect))));
  CHECK(nn::ReplicationPad1d(3)->forward(x[0]).equal(F::pad(x[0], F::PadFuncOptions({3, 3}).mode(kReplicate))));
  CHECK(nn::ZeroPad2d(1)->forward(x).equal(F::pad(x, F::PadFuncOptions({1, 1, 1, 1}))));
  Tensor c = nn::ConstantPad1d(nn::ConstantPad1dOptions({2, 1}, 3.5))->forward(x);
  CHECK(c.sizes() == IntArrayRef({2, 3, 4, 8}));
  CHECK(c.index({0, 0, 0, 0}).item<float>() == 3.5f);
  CHECK(c.narrow(3, 2, 5).equal(x));
  CHECK(printed(nn::ReflectionPad1d(2)) == "gr::nn::ReflectionPad1d(padding=[2, 2])");
  CHECK(printed(nn::ReflectionPad2d(nn::ReflectionPad2dOptions({1, 2, 3, 0}))) ==
        "gr::nn::ReflectionPad2d(padding=[1, 2, 3, 0])");
  CHECK(printed(nn::ReplicationPad2d(1)) == "gr::nn::ReplicationPad2d(padding=[1, 1, 1, 1])");
  CHECK(printed(nn::ZeroPad1d(nn::ZeroPad1dOptions({0, 3}))) == "gr::nn::ZeroPad1d(padding=[0, 3])");
  CHECK(printed(nn::ZeroPad2d(2)) == "gr::nn::ZeroPad2d(padding=[2, 2, 2, 2])");
  CHECK(printed(nn::ConstantPad2d(1, 3.5)) == "gr::nn::ConstantPad2d(padding=[1, 1, 1, 1], value=3.5)");
  CHECK(printed(nn::ReplicationPad3d(1)) == "gr::nn::ReplicationPad3d(padding=[1, 1, 1, 1, 1, 1])");
}

TEST_CASE("Upsample: forward is F::interpolate; pretty_print as libtorch's") {
  Tensor x = randn({1, 2, 3, 4});
  nn::Upsample up(nn::UpsampleOptions().scale_factor(std::vector<double>{2, 2}).mode(kBilinear).align_corners(false));
  CHECK(up->forward(x).equal(F::interpolate(
      x, F::InterpolateFuncOptions().scale_factor(std::vector<double>{2, 2}).mode(kBilinear).align_corners(false))));
  CHECK(up->forward(x).sizes() == IntArrayRef({1, 2, 6, 8}));
  CHECK(printed(up) == "gr::nn::Upsample(scale_factor=[2, 2], mode=kBilinear)");
  nn::Upsample by_size(nn::UpsampleOptions().size(std::vector<int64_t>{5, 7}));
  CHECK(by_size->forward(x).sizes() == IntArrayRef({1, 2, 5, 7}));
  CHECK(printed(by_size) == "gr::nn::Upsample(size=[5, 7], mode=kNearest)");
  nn::Upsample linear(nn::UpsampleOptions().scale_factor(std::vector<double>{1.5}).mode(kLinear));
  CHECK(printed(linear) == "gr::nn::Upsample(scale_factor=[1.5], mode=kLinear)");
  CHECK(linear->forward(randn({2, 3, 4})).sizes() == IntArrayRef({2, 3, 6}));
}

TEST_CASE("Padding and interpolation keep the gradient exact where several outputs read one input") {
  // Replicate: the edge input receives every output left of it; circular: wrapped copies add.
  Tensor x = arange(4, TensorOptions(kFloat64)).requires_grad_(true);
  F::pad(x.view({1, 4}), F::PadFuncOptions({3, 1}).mode(kReplicate)).sum().backward();
  CHECK(x.grad().equal(tensor({4.0, 1.0, 1.0, 2.0}, TensorOptions(kFloat64))));
  Tensor y = arange(3, TensorOptions(kFloat64)).requires_grad_(true);
  F::pad(y.view({1, 3}), F::PadFuncOptions({3, 2}).mode(kCircular)).sum().backward();
  CHECK(y.grad().equal(tensor({3.0, 3.0, 2.0}, TensorOptions(kFloat64))));
  // Nearest x2: every input feeds two outputs.
  Tensor z = randn({1, 1, 3}, TensorOptions(kFloat64)).requires_grad_(true);
  F::interpolate(z, F::InterpolateFuncOptions().size(std::vector<int64_t>{6})).sum().backward();
  CHECK(z.grad().equal(full({1, 1, 3}, 2.0, TensorOptions(kFloat64))));
}

TEST_CASE("Padding errors name the op, the padding and the shape") {
  Tensor x = randn({1, 2, 3, 3});
  auto pad = [&](std::vector<int64_t> p, F::PadFuncOptions::mode_t mode, Tensor in) {
    return error_of([&] { F::pad(in, F::PadFuncOptions(p).mode(mode)); });
  };
  CHECK(pad({3, 1, 0, 0}, kReflect, x).find("padding size should be less than the corresponding input dimension, "
                                            "but got: padding (3, 1) at dimension 3 of input [1, 2, 3, 3]") !=
        std::string::npos);
  CHECK(pad({1, 1, 1, 1}, kReflect, randn({3, 3})).find("needs a 3-D or 4-D input, got shape [3, 3]") !=
        std::string::npos);
  CHECK(pad({1, 1}, kReflect, randn({1, 1, 3, 3, 3})).find("needs a 2-D or 3-D input") != std::string::npos);
  CHECK(pad({1, 2, 3}, kConstant, x).find("must be divisible by 2") != std::string::npos);
  CHECK(pad({1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, kConstant, x).find("less than or equal to two times") !=
        std::string::npos);
  CHECK(pad({4, 0}, kCircular, randn({1, 2, 3})).find("wrapping around more than once") != std::string::npos);
  CHECK(pad({-3, 1}, kCircular, randn({1, 2, 3})).find("resulting in an empty dimension") != std::string::npos);
  CHECK(pad({-2, -2}, kConstant, x).find("resulted in a negative output size") != std::string::npos);
  CHECK(pad({-2, -1}, kReplicate, randn({2, 3})).find("is too small") != std::string::npos);
  CHECK(error_of([&] { gr::pad(x, {1, 1}, "reflect", 1.0); })
            .find("padding mode \"reflect\" doesn't take in value argument") != std::string::npos);
  CHECK(error_of([] { reflection_pad2d(randn({1, 2, 3, 3}), {1, 1}); }).find("padding size is expected to be 4") !=
        std::string::npos);
  CHECK(error_of([] { gr::pad(randn({2, 3}), {1, 1}, "wrap"); }).find("unrecognised padding mode \"wrap\"") !=
        std::string::npos);
}

TEST_CASE("Interpolation errors: size and scale_factor, modes and ranks, align_corners") {
  Tensor x = randn({1, 2, 3, 4});
  auto err = [&](const Tensor& in, const F::InterpolateFuncOptions& o) {
    return error_of([&] { F::interpolate(in, o); });
  };
  CHECK(err(x, F::InterpolateFuncOptions().size(std::vector<int64_t>{4, 4}).scale_factor(std::vector<double>{2, 2}))
            .find("only one of size or scale_factor should be defined") != std::string::npos);
  CHECK(err(x, F::InterpolateFuncOptions()).find("either size or scale_factor should be defined") !=
        std::string::npos);
  CHECK(err(x, F::InterpolateFuncOptions().scale_factor(std::vector<double>{2}))
            .find("scale_factor shape must match input shape. Input is 2D") != std::string::npos);
  CHECK(err(x, F::InterpolateFuncOptions().size(std::vector<int64_t>{4}).mode(kLinear))
            .find("got 4D input, but kLinear mode needs 3D input") != std::string::npos);
  CHECK(err(randn({2, 3, 4}), F::InterpolateFuncOptions().size(std::vector<int64_t>{4}).mode(kBilinear))
            .find("got 3D input, but kBilinear mode needs 4D input") != std::string::npos);
  CHECK(err(x, F::InterpolateFuncOptions().size(std::vector<int64_t>{4, 4}).align_corners(true))
            .find("align_corners option can only be set with the interpolating modes") != std::string::npos);
  CHECK(err(randn({2, 3}), F::InterpolateFuncOptions().size(std::vector<int64_t>{4}))
            .find("only 3D, 4D and 5D input tensors are supported (got 2D)") != std::string::npos);
  CHECK(err(x, F::InterpolateFuncOptions().scale_factor(std::vector<double>{0.1, 1}))
            .find("output sizes should be greater than 0") != std::string::npos);
  CHECK(error_of([] { upsample_nearest2d(randn({1, 2, 3, 4}), {4}); }).find("output_size equals to 2") !=
        std::string::npos);
}
