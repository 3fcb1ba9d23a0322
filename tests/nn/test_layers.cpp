// Layers: parameter shapes and names, PyTorch's default initialisation bounds, modes,
// option errors, Sequential, functional and printing.
#include <cmath>
#include <sstream>

#include "test_util.h"

using namespace gr;
namespace F = gr::nn::functional;

TEST_CASE("Linear and Conv2d: shapes, default init bounds, options") {
  manual_seed(0);
  nn::Linear fc(1600, 128);
  CHECK(fc->weight.sizes() == IntArrayRef({128, 1600}));
  CHECK(fc->bias.sizes() == IntArrayRef({128}));
  double bound = 1.0 / std::sqrt(1600.0);
  CHECK(fc->weight.abs().max().item<double>() <= bound);
  CHECK(fc->weight.abs().max().item<double>() > 0.9 * bound);  // fills the range
  CHECK(fc->bias.abs().max().item<double>() <= bound);
  CHECK(fc(zeros({2, 1600})).sizes() == IntArrayRef({2, 128}));
  CHECK_FALSE(nn::Linear(nn::LinearOptions(3, 4).bias(false))->bias.defined());
  CHECK_THROWS_WITH_AS(nn::Linear(0, 4), doctest::Contains("positive"), gr::Error);

  nn::Conv2d conv(nn::Conv2dOptions(4, 8, 3).stride(2).padding(1).groups(2));
  CHECK(conv->weight.sizes() == IntArrayRef({8, 2, 3, 3}));
  double cbound = 1.0 / std::sqrt(2.0 * 9.0);
  CHECK(conv->weight.abs().max().item<double>() <= cbound);
  CHECK(conv(zeros({1, 4, 8, 8})).sizes() == IntArrayRef({1, 8, 4, 4}));
  CHECK_THROWS_WITH_AS(nn::Conv2d(nn::Conv2dOptions(3, 8, 3).groups(2)), doctest::Contains("divisible by groups"),
                       gr::Error);
  CHECK(nn::Conv2d(1, 32, 3)->named_parameters().keys() == std::vector<std::string>{"weight", "bias"});
}

TEST_CASE("BatchNorm2d: buffers, train/eval behaviour, num_batches_tracked") {
  nn::BatchNorm2d bn(3);
  CHECK(bn->named_buffers().keys() == std::vector<std::string>{"running_mean", "running_var", "num_batches_tracked"});
  Tensor x = randn({8, 3, 4, 4}) * 3.0 + 2.0;
  Tensor y = bn(x);
  // Training output is normalised per channel.
  CHECK(std::abs(y.mean().item<double>()) < 1e-5);
  CHECK(y.var({0, 2, 3}, false).mean().item<double>() == doctest::Approx(1.0).epsilon(1e-3));
  CHECK(bn->num_batches_tracked.item<int64_t>() == 1);
  CHECK(bn->running_mean.mean().item<double>() == doctest::Approx(0.2).epsilon(0.15));
  bn->eval();
  Tensor before = bn->running_mean.clone();
  bn(x);
  CHECK(bn->running_mean.equal(before));
  CHECK(bn->num_batches_tracked.item<int64_t>() == 1);
  nn::BatchNorm2d plain(nn::BatchNorm2dOptions(3).affine(false).track_running_stats(false));
  CHECK(plain->parameters().empty());
  CHECK(plain->buffers().empty());
  plain->eval();
  CHECK(std::abs(plain(x).mean().item<double>()) < 1e-5);  // batch statistics even in eval
  CHECK_THROWS_WITH_AS(bn(zeros({2, 3, 4})), doctest::Contains("expected 4D input"), gr::Error);
  CHECK_THROWS_WITH_AS(bn(zeros({2, 4, 2, 2})), doctest::Contains("expected 3 channels"), gr::Error);
}

TEST_CASE("Dropout is active only in training") {
  nn::Dropout drop(0.5);
  Tensor x = ones({1000});
  Tensor y = drop(x);
  double zeros_frac = y.eq(0.0).to(kFloat32).mean().item<double>();
  CHECK(zeros_frac == doctest::Approx(0.5).epsilon(0.15));
  CHECK(y.max().item<double>() == 2.0);
  drop->eval();
  CHECK(drop(x).equal(x));
  CHECK_THROWS_WITH_AS(nn::Dropout(1.5), doctest::Contains("between 0 and 1"), gr::Error);
}

TEST_CASE("the reference CNN as a Sequential, and its printout") {
  nn::Sequential model(nn::Conv2d(1, 32, 3), nn::BatchNorm2d(32), nn::ReLU(), nn::MaxPool2d(2), nn::Conv2d(32, 64, 3),
                       nn::BatchNorm2d(64), nn::ReLU(), nn::MaxPool2d(2), nn::Flatten(), nn::Linear(1600, 128),
                       nn::ReLU(), nn::Linear(128, 10), nn::LogSoftmax(1));
  CHECK(model->size() == 13);
  CHECK(model(zeros({2, 1, 28, 28})).sizes() == IntArrayRef({2, 10}));
  int64_t count = 0;
  for (const Tensor& p : model->parameters()) count += p.numel();
  CHECK(count == 225226);  // same as torch's model
  CHECK(model->named_parameters().keys().front() == "0.weight");
  CHECK(model->ptr<nn::LinearImpl>(9)->options.out_features() == 128);
  CHECK_THROWS_AS(model->ptr<nn::LinearImpl>(0), gr::Error);
  CHECK_THROWS_AS((*model)[13], gr::Error);
  std::ostringstream out;
  out << *model;
  std::string s = out.str();
  CHECK(s.rfind("gr::nn::Sequential(\n  (0): gr::nn::Conv2d(1, 32, kernel_size=[3, 3], stride=[1, 1])\n", 0) == 0);
  CHECK(s.find("(1): gr::nn::BatchNorm2d(32, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)") !=
        std::string::npos);
  CHECK(s.find("(9): gr::nn::Linear(in_features=1600, out_features=128, bias=true)") != std::string::npos);
  CHECK_THROWS_WITH_AS(nn::Sequential()->forward(zeros({1})), doctest::Contains("empty Sequential"), gr::Error);
}

TEST_CASE("functional forms match the ops") {
  Tensor x = randn({2, 3, 6, 6});
  CHECK(F::max_pool2d(x, F::MaxPool2dFuncOptions(2)).sizes() == IntArrayRef({2, 3, 3, 3}));
  CHECK(F::avg_pool2d(x, F::AvgPool2dFuncOptions(3).stride(3)).sizes() == IntArrayRef({2, 3, 2, 2}));
  Tensor w = randn({4, 3, 3, 3});
  CHECK(F::conv2d(x, w, F::Conv2dFuncOptions().padding(1)).sizes() == IntArrayRef({2, 4, 6, 6}));
  Tensor logits = randn({4, 5});
  Tensor target = tensor({0, 1, 2, 3});
  Tensor a = F::cross_entropy(logits, target);
  Tensor b = F::nll_loss(F::log_softmax(logits, 1), target);
  CHECK(a.allclose(b));
  CHECK(F::nll_loss(F::log_softmax(logits, 1), target, F::NLLLossFuncOptions().reduction(kSum))
            .allclose(b * 4.0));
  CHECK(F::mse_loss(x, x).item<double>() == 0.0);
}

TEST_CASE("init functions follow PyTorch's formulas") {
  auto [fan_in, fan_out] = nn::init::calculate_fan_in_and_fan_out(empty({64, 32, 3, 3}));
  CHECK(fan_in == 288);
  CHECK(fan_out == 576);
  CHECK(nn::init::calculate_gain(nn::init::Nonlinearity::ReLU) == doctest::Approx(std::sqrt(2.0)));
  CHECK(nn::init::calculate_gain(nn::init::Nonlinearity::LeakyReLU, std::sqrt(5.0)) ==
        doctest::Approx(std::sqrt(1.0 / 3.0)));
  Tensor w = empty({200, 100});
  nn::init::xavier_uniform_(w);
  double b = std::sqrt(6.0 / 300.0);
  CHECK(w.abs().max().item<double>() <= b);
  CHECK(w.var().item<double>() == doctest::Approx(b * b / 3.0).epsilon(0.05));
  nn::init::kaiming_uniform_(w, 0.0, nn::init::FanMode::FanIn, nn::init::Nonlinearity::ReLU);
  CHECK(w.abs().max().item<double>() <= std::sqrt(6.0 / 100.0));
  nn::init::zeros_(w);
  CHECK(w.abs().max().item<double>() == 0.0);
  nn::init::ones_(w);
  CHECK(w.min().item<double>() == 1.0);
  Tensor v = empty({5});
  CHECK_THROWS_WITH_AS(nn::init::xavier_uniform_(v), doctest::Contains("fewer than 2 dimensions"), gr::Error);
}

TEST_CASE("wrong shapes into layers give an error naming the op and both shapes") {
  manual_seed(0);
  nn::Linear fc(8, 4);
  std::string m = gr::test::error_of([&] { fc(zeros({2, 7})); });
  INFO(m);
  CHECK(m.find("[2, 7]") != std::string::npos);
  CHECK(m.find("8") != std::string::npos);
  nn::Conv2d conv(nn::Conv2dOptions(3, 8, 3));
  m = gr::test::error_of([&] { conv(zeros({1, 4, 8, 8})); });
  INFO(m);
  CHECK(m.find("conv2d") != std::string::npos);
  CHECK(m.find("[1, 4, 8, 8]") != std::string::npos);
  m = gr::test::error_of([&] { conv(zeros({4, 8, 8})); });
  INFO(m);
  CHECK(m.find("conv2d") != std::string::npos);
  m = gr::test::error_of([&] { conv(zeros({1, 3, 2, 2})); });  // smaller than the kernel
  INFO(m);
  CHECK(m.find("conv2d") != std::string::npos);
  m = gr::test::error_of([&] { F::max_pool2d(zeros({1, 1, 1, 1}), F::MaxPool2dFuncOptions(2)); });
  INFO(m);
  CHECK(m.find("max_pool2d") != std::string::npos);
  m = gr::test::error_of([&] { F::cross_entropy(zeros({4, 10}), zeros({3}, kInt64)); });
  INFO(m);
  CHECK(m.find("[4, 10]") != std::string::npos);
  CHECK(m.find("[3]") != std::string::npos);
  m = gr::test::error_of([&] { F::cross_entropy(zeros({4, 10}), full({4}, 10, kInt64)); });
  INFO(m);
  CHECK(m.find("10") != std::string::npos);
}
