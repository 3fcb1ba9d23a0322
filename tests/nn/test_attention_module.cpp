// nn::MultiheadAttention against torch.nn.MultiheadAttention
// (tests/data/attention_module_reference.json, make_attention_module_reference.py): PyTorch's
// state_dict names and shapes, outputs, attention weights and gradients for every option
// (masks, kdim/vdim, batch_first, bias_kv, zero_attn, unbatched, the fused need_weights=false
// path); errors.
#include "reference_util.h"

using namespace gr;
using gr::test::check_close;
using gr::test::error_of;
using gr::test::load_parameters;
using gr::test::load_reference;
using gr::test::tensor_from_json;

namespace {
Tensor mask_from(const nlohmann::json& c, const std::string& key) {
  if (!c.contains(key)) return {};
  Tensor m = tensor_from_json(c.at(key));
  return c.at(key + "_dtype") == "bool" ? m.to(kBool) : m;
}
}  // namespace

TEST_CASE("MultiheadAttention matches PyTorch: state_dict names, outputs, weights and gradients") {
  const nlohmann::json ref = load_reference("attention_module_reference.json");
  REQUIRE(ref.at("cases").size() >= 9);
  for (const auto& c : ref.at("cases")) {
    INFO("case: ", c.at("name").get<std::string>());
    nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(c.at("E"), c.at("H"))
                                   .kdim(c.at("kdim"))
                                   .vdim(c.at("vdim"))
                                   .bias(c.at("bias"))
                                   .add_bias_kv(c.at("add_bias_kv"))
                                   .add_zero_attn(c.at("add_zero_attn"))
                                   .batch_first(c.at("batch_first")));
    mha->to(kFloat64);
    mha->eval();
    load_parameters(*mha, c.at("state"));
    Tensor q = tensor_from_json(c.at("query")).requires_grad_(true);
    auto [out, weights] = mha->forward(q, tensor_from_json(c.at("key")), tensor_from_json(c.at("value")),
                                       mask_from(c, "key_padding_mask"), c.at("need_weights"), mask_from(c, "attn_mask"),
                                       c.at("average"));
    check_close(out, tensor_from_json(c.at("out")), 1e-10);
    CHECK(weights.defined() == c.contains("weights"));
    if (c.contains("weights")) check_close(weights, tensor_from_json(c.at("weights")), 1e-10);
    out.backward(tensor_from_json(c.at("grad")));
    check_close(q.grad(), tensor_from_json(c.at("grad_query")), 1e-10);
    Tensor w = mha->named_parameters()[c.at("grad_weight_name").get<std::string>()];
    check_close(w.grad(), tensor_from_json(c.at("grad_weight")), 1e-10);
  }
}

TEST_CASE("MultiheadAttention: PyTorch's init, printing, dropout in training only, errors") {
  nn::MultiheadAttention mha(16, 4);
  CHECK(mha->in_proj_weight.sizes() == IntArrayRef{48, 16});
  CHECK(mha->in_proj_bias.abs().max().item<double>() == 0.0);
  CHECK(mha->out_proj->bias.abs().max().item<double>() == 0.0);
  const double bound = std::sqrt(6.0 / (48 + 16));  // xavier_uniform_ of [3E, E]
  CHECK(mha->in_proj_weight.abs().max().item<double>() <= bound);
  CHECK(mha->in_proj_weight.abs().max().item<double>() > 0.5 * bound);
  std::ostringstream printed;
  printed << *mha;
  CHECK(printed.str().find("gr::nn::MultiheadAttention") == 0);
  CHECK(printed.str().find("(out_proj): gr::nn::Linear(in_features=16, out_features=16, bias=true)") != std::string::npos);

  nn::MultiheadAttention dropped(nn::MultiheadAttentionOptions(8, 2).dropout(0.5));
  Tensor x = randn({5, 2, 8});
  auto [a, wa] = dropped->forward(x, x, x, {}, false);
  auto [b, wb] = dropped->forward(x, x, x, {}, false);
  CHECK_FALSE(a.equal(b));
  dropped->eval();
  auto [c, wc] = dropped->forward(x, x, x, {}, false);
  auto [d, wd] = dropped->forward(x, x, x, {}, true);
  check_close(c, d, 1e-5);

  CHECK(error_of([] { nn::MultiheadAttention(10, 3); }) ==
        "MultiheadAttention: embed_dim must be divisible by num_heads, got 10 and 3");
  CHECK(error_of([&] { mha->forward(randn({5, 2, 8}), randn({5, 2, 16}), randn({5, 2, 16})); }) ==
        "MultiheadAttention: was expecting embedding dimension of 16, but got 8");
  CHECK(error_of([&] {
          Tensor y = randn({5, 2, 16});
          mha->forward(y, y, y, ones({2, 4}, TensorOptions(kBool)));
        }) == "MultiheadAttention: expected key_padding_mask of shape [2, 5], got [2, 4]");
  CHECK(error_of([&] {
          Tensor y = randn({5, 2, 16});
          mha->forward(y, y, y, {}, true, ones({5, 4}, TensorOptions(kBool)));
        }) == "MultiheadAttention: expected attn_mask of shape [5, 5] or [8, 5, 5], got [5, 4]");
}
