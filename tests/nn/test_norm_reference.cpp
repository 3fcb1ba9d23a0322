// The norm branch's layers (normalisation, embeddings, activations) against PyTorch: outputs,
// input and parameter gradients and buffers (tests/data/norm_reference.json, made by
// make_norm_reference.py); pretty_print against libtorch's text.
#include <functional>
#include <map>
#include <sstream>

#include "reference_util.h"

using namespace gr;
using gr::test::check_close;
using gr::test::tensor_from_json;

namespace {

// A layer and its forward (indices-taking layers get the offsets too, possibly undefined).
struct Layer {
  std::shared_ptr<nn::Module> module;
  std::function<Tensor(const Tensor&, const Tensor&)> forward;
};
template <class Holder>
Layer layer(Holder h) {
  return {h.ptr(), [h](const Tensor& x, const Tensor&) mutable { return h->forward(x); }};
}
Layer bag(nn::EmbeddingBag h) {
  return {h.ptr(), [h](const Tensor& x, const Tensor& offsets) mutable { return h->forward(x, offsets); }};
}

const std::map<std::string, std::function<Layer()>>& layers() {
  using namespace gr::nn;
  static const std::map<std::string, std::function<Layer()>> m = {
      {"layernorm_1d", [] { return layer(LayerNorm(LayerNormOptions({6}))); }},
      {"layernorm_2d", [] { return layer(LayerNorm(LayerNormOptions({3, 4}))); }},
      {"layernorm_no_affine_eps",
       [] { return layer(LayerNorm(LayerNormOptions({5}).eps(1e-3).elementwise_affine(false))); }},
      {"layernorm_wide_offset", [] { return layer(LayerNorm(LayerNormOptions({300}))); }},
      {"embedding", [] { return layer(Embedding(10, 4)); }},
      {"embedding_padding_idx", [] { return layer(Embedding(EmbeddingOptions(10, 3).padding_idx(2))); }},
      {"embedding_bag_sum", [] { return bag(EmbeddingBag(EmbeddingBagOptions(10, 3).mode(gr::kSum))); }},
      {"embedding_bag_mean", [] { return bag(EmbeddingBag(10, 3)); }},
      {"embedding_bag_max", [] { return bag(EmbeddingBag(EmbeddingBagOptions(10, 3).mode(EmbeddingBagMode::Max))); }},
      {"gelu", [] { return layer(GELU()); }},
      {"gelu_tanh", [] { return layer(GELU(GELUOptions().approximate("tanh"))); }},
      {"silu", [] { return layer(SiLU()); }},
      {"mish", [] { return layer(Mish()); }},
      {"tanh", [] { return layer(Tanh()); }},
      {"sigmoid", [] { return layer(Sigmoid()); }},
      {"leaky_relu", [] { return layer(LeakyReLU(LeakyReLUOptions().negative_slope(0.2))); }},
      {"elu", [] { return layer(ELU(ELUOptions().alpha(0.7))); }},
      {"selu", [] { return layer(SELU()); }},
      {"prelu", [] { return layer(PReLU()); }},
      {"prelu_channels", [] { return layer(PReLU(PReLUOptions().num_parameters(3))); }},
      {"softplus", [] { return layer(Softplus(SoftplusOptions().beta(2).threshold(5))); }},
      {"hardtanh", [] { return layer(Hardtanh(HardtanhOptions().min_val(-0.5).max_val(1.5))); }},
      {"relu6", [] { return layer(ReLU6()); }},
      {"softmax", [] { return layer(Softmax(1)); }},
      {"log_softmax", [] { return layer(LogSoftmax(LogSoftmaxOptions(-1))); }},
      {"identity", [] { return layer(Identity()); }},
      {"unflatten", [] { return layer(Unflatten(UnflattenOptions(1, {2, 3}))); }},
      {"rmsnorm", [] { return layer(RMSNorm(RMSNormOptions({4}))); }},
      {"rmsnorm_eps_2d", [] { return layer(RMSNorm(RMSNormOptions({2, 3}).eps(1e-2))); }},
      {"rmsnorm_no_affine", [] { return layer(RMSNorm(RMSNormOptions({5}).elementwise_affine(false))); }},
      {"groupnorm", [] { return layer(GroupNorm(2, 4)); }},
      {"groupnorm_2d_no_affine", [] { return layer(GroupNorm(GroupNormOptions(3, 6).eps(1e-3).affine(false))); }},
      {"instancenorm2d", [] { return layer(InstanceNorm2d(3)); }},
      {"instancenorm2d_affine_track",
       [] { return layer(InstanceNorm2d(InstanceNorm2dOptions(3).affine(true).track_running_stats(true))); }},
      {"batchnorm1d_2d", [] { return layer(BatchNorm1d(4)); }},
      {"batchnorm1d_3d", [] { return layer(BatchNorm1d(3)); }},
      {"batchnorm1d_eval", [] { return layer(BatchNorm1d(3)); }},
      {"batchnorm3d", [] { return layer(BatchNorm3d(2)); }},
  };
  return m;
}

OrderedDict<Tensor> state_from_json(const nlohmann::json& j, const nn::Module& like) {
  OrderedDict<Tensor> state;
  for (const auto& [key, t] : like.state_dict()) state.insert(key, tensor_from_json(j.at(key), t.scalar_type()));
  return state;
}

void check_case(const nlohmann::json& c) {
  const std::string name = c.at("name");
  CAPTURE(name);
  Layer l = layers().at(name)();
  l.module->to(kFloat64);
  REQUIRE(l.module->state_dict().keys().size() == c.at("state").size());
  l.module->load_state_dict(state_from_json(c.at("state"), *l.module));
  l.module->train(c.at("train").get<bool>());
  for (const auto& step : c.at("steps")) {
    Tensor x, offsets;
    if (step.contains("indices")) {
      x = tensor_from_json(step.at("indices"), kInt64);
      if (step.contains("offsets")) offsets = tensor_from_json(step.at("offsets"), kInt64);
    } else {
      x = tensor_from_json(step.at("input")).requires_grad_(true);
    }
    Tensor y = l.forward(x, offsets);
    check_close(y, tensor_from_json(step.at("output")), 1e-10);
    l.module->zero_grad();
    y.backward(tensor_from_json(step.at("upstream")));
    if (step.contains("input_grad")) check_close(x.grad(), tensor_from_json(step.at("input_grad")), 1e-9);
    for (const auto& [pname, p] : l.module->named_parameters()) {
      CAPTURE(pname);
      check_close(p.grad(), tensor_from_json(step.at("param_grads").at(pname)), 1e-9);
    }
    if (!step.contains("state_after")) continue;
    for (const auto& [key, t] : l.module->state_dict()) {
      CAPTURE(key);
      check_close(t, tensor_from_json(step.at("state_after").at(key), t.scalar_type()), 1e-10);
    }
  }
}

std::string printed(const nn::Module& m) {
  std::ostringstream s;
  m.pretty_print(s);
  return s.str();
}

}  // namespace

TEST_CASE("norm layers match PyTorch: outputs, gradients, buffers") {
  nlohmann::json ref = gr::test::load_reference("norm_reference.json");
  std::map<std::string, const nlohmann::json*> by_name;
  for (const auto& c : ref.at("cases")) by_name[c.at("name").get<std::string>()] = &c;
  for (const auto& [name, make] : layers()) {
    CAPTURE(name);
    REQUIRE(by_name.count(name) == 1);
    check_case(*by_name.at(name));
  }
}

TEST_CASE("norm layers print as libtorch's") {
  using namespace gr::nn;
  CHECK(printed(*LayerNorm(LayerNormOptions({8}))) == "gr::nn::LayerNorm([8], eps=1e-05, elementwise_affine=true)");
  CHECK(printed(*LayerNorm(LayerNormOptions({2, 3}).eps(1e-3).elementwise_affine(false))) ==
        "gr::nn::LayerNorm([2, 3], eps=0.001, elementwise_affine=false)");
  CHECK(printed(*Embedding(10, 4)) == "gr::nn::Embedding(num_embeddings=10, embedding_dim=4)");
  CHECK(printed(*Embedding(EmbeddingOptions(10, 4).padding_idx(-1).max_norm(2.0).norm_type(1).scale_grad_by_freq(true))) ==
        "gr::nn::Embedding(num_embeddings=10, embedding_dim=4, padding_idx=9, max_norm=2, norm_type=1, "
        "scale_grad_by_freq=true)");
  CHECK(printed(*GELU(GELUOptions().approximate("tanh"))) == "gr::nn::GELU()");
  CHECK(printed(*SiLU()) == "gr::nn::SiLU()");
  CHECK(printed(*Mish()) == "gr::nn::Mish()");
  CHECK(printed(*Tanh()) == "gr::nn::Tanh()");
  CHECK(printed(*Sigmoid()) == "gr::nn::Sigmoid()");
  CHECK(printed(*LeakyReLU()) == "gr::nn::LeakyReLU(negative_slope=0.01)");
  CHECK(printed(*LeakyReLU(LeakyReLUOptions().negative_slope(0.2).inplace(true))) ==
        "gr::nn::LeakyReLU(negative_slope=0.2, inplace=true)");
  CHECK(printed(*ELU(ELUOptions().alpha(0.5))) == "gr::nn::ELU(alpha=0.5)");
  CHECK(printed(*SELU(true)) == "gr::nn::SELU(inplace=true)");
  CHECK(printed(*PReLU(PReLUOptions().num_parameters(3))) == "gr::nn::PReLU(num_parameters=3)");
  CHECK(printed(*Softplus()) == "gr::nn::Softplus(beta=1, threshold=20)");
  CHECK(printed(*Hardtanh()) == "gr::nn::Hardtanh(min_val=-1, max_val=1)");
  CHECK(printed(*ReLU6()) == "gr::nn::ReLU6()");
  CHECK(printed(*Softmax(-1)) == "gr::nn::Softmax(dim=-1)");
  CHECK(printed(*Identity()) == "gr::nn::Identity()");
  CHECK(printed(*Unflatten(UnflattenOptions(1, {2, 3}))) == "gr::nn::Unflatten(dim=1, unflattened_size={2, 3})");
  CHECK(printed(*Dropout2d()) == "gr::nn::Dropout2d(p=0.5, inplace=false)");
  CHECK(printed(*RMSNorm(RMSNormOptions({4}))) == "gr::nn::RMSNorm([4], eps=None, elementwise_affine=true)");
  CHECK(printed(*RMSNorm(RMSNormOptions({2, 3}).eps(1e-6).elementwise_affine(false))) ==
        "gr::nn::RMSNorm([2, 3], eps=1e-06, elementwise_affine=false)");
  CHECK(printed(*GroupNorm(2, 4)) == "gr::nn::GroupNorm(2, 4, eps=1e-05, affine=true)");
  CHECK(printed(*InstanceNorm2d(3)) ==
        "gr::nn::InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=false, track_running_stats=false)");
  CHECK(printed(*InstanceNorm1d(InstanceNorm1dOptions(2).affine(true))) ==
        "gr::nn::InstanceNorm1d(2, eps=1e-05, momentum=0.1, affine=true, track_running_stats=false)");
  CHECK(printed(*BatchNorm1d(4)) ==
        "gr::nn::BatchNorm1d(4, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)");
  CHECK(printed(*BatchNorm3d(BatchNorm3dOptions(2).momentum(std::nullopt))) ==
        "gr::nn::BatchNorm3d(2, eps=1e-05, momentum=None, affine=true, track_running_stats=true)");
  CHECK(printed(*EmbeddingBag(10, 4)) == "gr::nn::EmbeddingBag(num_embeddings=10, embedding_dim=4)");
  CHECK(printed(*EmbeddingBag(EmbeddingBagOptions(10, 4).mode(gr::kSum).include_last_offset(true).padding_idx(0))) ==
        "gr::nn::EmbeddingBag(num_embeddings=10, embedding_dim=4, mode=kSum, include_last_offset=true, padding_idx=0)");
}

TEST_CASE("Embedding: padding row, from_pretrained, max_norm, scale_grad_by_freq, errors") {
  using namespace gr::nn;
  Embedding e(EmbeddingOptions(6, 3).padding_idx(1));
  CHECK(e->weight.select(0, 1).abs().sum().item<float>() == 0.0f);  // the padding row starts at zero
  CHECK(e->named_parameters().keys() == std::vector<std::string>{"weight"});
  Tensor w = arange(12, TensorOptions(kFloat32)).reshape({4, 3});
  Embedding frozen = Embedding::from_pretrained(w);
  CHECK(!frozen->weight.requires_grad());
  CHECK(equal(frozen(tensor({3, 0}, TensorOptions(kInt64))), stack({w[3], w[0]})));
  CHECK(Embedding::from_pretrained(w, EmbeddingFromPretrainedOptions().freeze(false))->weight.requires_grad());
  // max_norm renormalises the rows used, in place.
  Tensor big = full({3, 2}, 3.0, TensorOptions(kFloat64));
  namespace F = gr::nn::functional;
  F::embedding(tensor({0, 2}, TensorOptions(kInt64)), big, F::EmbeddingFuncOptions().max_norm(1.0));
  CHECK(gr::norm(big[0]).item<double>() == doctest::Approx(1.0).epsilon(1e-6));
  CHECK(big[1][0].item<double>() == 3.0);
  // scale_grad_by_freq: index 1 appears twice, so its row gets (1 + 1) / 2.
  Tensor wt = zeros({3, 2}, TensorOptions(kFloat64)).requires_grad_(true);
  gr::embedding(wt, tensor({1, 1, 2}, TensorOptions(kInt64)), -1, true).sum().backward();
  gr::test::check_values(wt.grad(), {0, 0, 1, 1, 1, 1});
  CHECK(gr::test::error_of([] { Embedding(EmbeddingOptions(4, 2).padding_idx(4)); }).find("padding_idx must be within") !=
        std::string::npos);
  CHECK(gr::test::error_of([&] { gr::embedding(w, tensor({0.5}, TensorOptions(kFloat32))); })
            .find("embedding: expected indices of dtype int64 or int32, got float32") != std::string::npos);
  CHECK(gr::test::error_of([&] { gr::embedding(w, tensor({4}, TensorOptions(kInt64))); }).find("embedding") !=
        std::string::npos);
  CHECK(gr::test::error_of([&] { gr::embedding(w.reshape({-1}), tensor({1}, TensorOptions(kInt64))); })
            .find("expected weight to be 2-D") != std::string::npos);
  CHECK(gr::test::error_of([&] { Embedding::from_pretrained(w.reshape({-1})); }).find("2-dimensional") !=
        std::string::npos);
  CHECK(gr::test::error_of([&] {
          gr::embedding_bag(w, tensor({0, 1}, TensorOptions(kInt64)), tensor({0}, TensorOptions(kInt64)), false, 3);
        }).find("embedding_bag: mode 3 is not supported") != std::string::npos);
  CHECK(gr::test::error_of([&] {
          gr::embedding_bag(w, tensor({0, 1}, TensorOptions(kInt64)), tensor({1}, TensorOptions(kInt64)));
        }).find("offsets[0] has to be 0") != std::string::npos);
}

TEST_CASE("EmbeddingBag: 2-D indices, include_last_offset, per_sample_weights, padding_idx") {
  Tensor w = arange(12, TensorOptions(kFloat64)).reshape({4, 3});
  Tensor two_d = std::get<0>(gr::embedding_bag(w, tensor({{0, 1}, {2, 3}}, TensorOptions(kInt64)), {}, false, 0));
  gr::test::check_values(two_d, {3, 5, 7, 15, 17, 19});
  Tensor idx = tensor({0, 1, 2, 3}, TensorOptions(kInt64));
  Tensor last = std::get<0>(gr::embedding_bag(w, idx, tensor({0, 1, 4}, TensorOptions(kInt64)), false, 1, false, {},
                                              /*include_last_offset=*/true));
  gr::test::check_values(last, {0, 1, 2, 6, 7, 8});
  Tensor psw = tensor({1.0, 2.0, 0.5, 0.0}, TensorOptions(kFloat64));
  Tensor weighted =
      std::get<0>(gr::embedding_bag(w, idx, tensor({0, 2}, TensorOptions(kInt64)), false, 0, false, psw));
  gr::test::check_values(weighted, {6, 9, 12, 3, 3.5, 4});
  // padding_idx entries are left out of the sum and of the mean's count.
  Tensor padded = std::get<0>(gr::embedding_bag(w, idx, tensor({0, 2}, TensorOptions(kInt64)), false, 1, false, {},
                                                false, 1));
  gr::test::check_values(padded, {0, 1, 2, 7.5, 8.5, 9.5});
  // max mode: the row each maximum came from; an empty bag gives zeros and index -1.
  auto [mx, o2b, sizes, arg] = gr::embedding_bag(w.flip({0}), idx, tensor({0, 3, 3}, TensorOptions(kInt64)), false, 2);
  gr::test::check_values(mx, {9, 10, 11, 0, 0, 0, 0, 1, 2});
  gr::test::check_values(arg.to(kFloat64), {0, 0, 0, -1, -1, -1, 3, 3, 3});
  gr::test::check_values(sizes.to(kFloat64), {3, 0, 1});
}

TEST_CASE("activation functionals: options, inplace, errors") {
  namespace F = gr::nn::functional;
  Tensor x = tensor({-2.0, -0.5, 0.5, 7.0}, TensorOptions(kFloat64));
  gr::test::check_values(F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.5)), {-1, -0.25, 0.5, 7});
  gr::test::check_values(F::relu6(x), {0, 0, 0.5, 6});
  gr::test::check_values(F::hardtanh(x, F::HardtanhFuncOptions().min_val(-1).max_val(2)), {-1, -0.5, 0.5, 2});
  CHECK(equal(F::softmax(x, F::SoftmaxFuncOptions(0)), gr::softmax(x, 0)));
  CHECK(F::softmax(x.to(kFloat32), F::SoftmaxFuncOptions(0).dtype(kFloat64)).scalar_type() == kFloat64);
  Tensor y = x.clone();
  Tensor r = F::elu(y, F::ELUFuncOptions().inplace(true));
  CHECK(r.data_ptr() == y.data_ptr());
  CHECK(y[0].item<double>() == doctest::Approx(std::expm1(-2.0)));
  // In place on a tensor with history (DCGAN's LeakyReLU(inplace)): backward still works.
  Tensor leaf = x.clone().requires_grad_(true);
  Tensor h = leaf * 2;
  gr::nn::LeakyReLU act(gr::nn::LeakyReLUOptions().negative_slope(0.1).inplace(true));
  Tensor out = act(h);
  CHECK(out.data_ptr() == h.data_ptr());
  out.sum().backward();
  gr::test::check_values(leaf.grad(), {0.2, 0.2, 2, 2});
  // float32 runs the same functors (gelu against the float64 values).
  CHECK(allclose(gr::gelu(x.to(kFloat32), "tanh").to(kFloat64), gr::gelu(x, "tanh"), 1e-6, 1e-6));
  CHECK(gr::test::error_of([&] { gr::gelu(x, "fast"); }).find("gelu: approximate must be \"none\" or \"tanh\"") !=
        std::string::npos);
  CHECK(gr::test::error_of([] { gr::silu(tensor({1, 2}, TensorOptions(kInt64))); })
            .find("silu: not implemented for dtype int64") != std::string::npos);
  CHECK(gr::test::error_of([&] { gr::prelu(zeros({2, 3, 4}, TensorOptions(kFloat64)), zeros({2}, TensorOptions(kFloat64))); })
            .find("prelu: mismatch of parameter numbers and input channel size: found 2 parameters") != std::string::npos);
  CHECK(gr::test::error_of([&] { gr::hardtanh(x, 1, 0); }).find("hardtanh: min_val (1) must be less than or equal") !=
        std::string::npos);
}

TEST_CASE("normalisation layers: state_dict names, input ranks, errors") {
  using namespace gr::nn;
  CHECK(LayerNorm(LayerNormOptions({4}))->state_dict().keys() == std::vector<std::string>{"weight", "bias"});
  CHECK(RMSNorm(RMSNormOptions({4}))->state_dict().keys() == std::vector<std::string>{"weight"});
  CHECK(InstanceNorm2d(InstanceNorm2dOptions(3).affine(true).track_running_stats(true))->state_dict().keys() ==
        std::vector<std::string>{"weight", "bias", "running_mean", "running_var", "num_batches_tracked"});
  // Unbatched input [C, H, W] is normalised as one instance batch.
  InstanceNorm2d in(3);
  Tensor x = randn({3, 4, 5}, TensorOptions(kFloat64));
  CHECK(allclose(in(x), in(x.unsqueeze(0)).squeeze(0)));
  CHECK(gr::test::error_of([&] { in(randn({3, 4})); }).find("gr::nn::InstanceNorm2d: expected 3D or 4D input (got 2D") !=
        std::string::npos);
  CHECK(gr::test::error_of([] { BatchNorm1d(3)(randn({2, 3, 4, 5})); })
            .find("gr::nn::BatchNorm1d: expected 2D or 3D input (got 4D input)") != std::string::npos);
  CHECK(gr::test::error_of([] { BatchNorm3d(3)(randn({2, 3, 4, 5})); })
            .find("gr::nn::BatchNorm3d: expected 5D input (got 4D input)") != std::string::npos);
  CHECK(gr::test::error_of([] { GroupNorm(3, 4); }).find("GroupNorm: num_channels (4) must be divisible by num_groups (3)") !=
        std::string::npos);
  CHECK(gr::test::error_of([] { gr::group_norm(randn({2, 6, 3}), 4); })
            .find("group_norm: expected number of channels in input to be divisible by num_groups, but got input of "
                  "shape [2, 6, 3] and num_groups=4") != std::string::npos);
  CHECK(gr::test::error_of([] { gr::group_norm(randn({2, 6, 3}), 3, randn({3})); })
            .find("group_norm: expected weight of shape [6]") != std::string::npos);
  CHECK(gr::test::error_of([] { gr::rms_norm(randn({2, 3}), {2}); })
            .find("rms_norm: given normalized_shape=[2], expected input with shape [*, 2], but got input of size [2, 3]") !=
        std::string::npos);
  CHECK(gr::test::error_of([] { gr::instance_norm(randn({2, 3, 1}), {}, {}, {}, {}, true, 0.1, 1e-5); })
            .find("instance_norm: expected more than 1 spatial element") != std::string::npos);
  CHECK(gr::test::error_of([] { gr::instance_norm(randn({2, 3, 4}), {}, {}, {}, {}, false, 0.1, 1e-5); })
            .find("instance_norm: expected running_mean and running_var") != std::string::npos);
  // rms_norm's default eps is the dtype's machine epsilon.
  Tensor z = zeros({2, 3}, TensorOptions(kFloat32));
  CHECK(gr::rms_norm(z + 1e-4, {3}).abs().max().item<float>() ==
        doctest::Approx(1e-4 / std::sqrt(1e-8 + 1.1920929e-07)).epsilon(1e-4));
}

TEST_CASE("Dropout2d zeroes whole channels and scales the rest") {
  using namespace gr::nn;
  Dropout2d d(0.5);
  Tensor x = ones({4, 8, 3, 3});
  Tensor y = d(x);
  Tensor per_channel = y.sum({2, 3});  // 0 or 9 * 2 for each (n, c)
  CHECK(per_channel.eq(0).logical_or(per_channel.eq(18)).all().item<bool>());
  CHECK(per_channel.eq(0).any().item<bool>());
  CHECK(per_channel.eq(18).any().item<bool>());
  d->eval();
  CHECK(equal(d(x), x));
  CHECK(gr::test::error_of([] { Dropout2d(1.5); }).find("probability has to be between 0 and 1, but got 1.5") !=
        std::string::npos);
}
