// TransformerEncoderLayer, TransformerEncoder and TransformerDecoderLayer against torch.nn's
// (tests/data/transformer_reference.json, make_transformer_reference.py): PyTorch's
// state_dict names, outputs and input gradients (post-norm and norm_first, relu and gelu,
// masks, batch_first, a final norm); the encoder's layers start as copies of one another.
#include "reference_util.h"

using namespace gr;
using gr::test::check_close;
using gr::test::load_parameters;
using gr::test::load_reference;
using gr::test::tensor_from_json;

TEST_CASE("Transformer layers match PyTorch: state_dict names, outputs and gradients") {
  const nlohmann::json ref = load_reference("transformer_reference.json");
  const int64_t E = ref.at("E"), H = ref.at("H"), FF = ref.at("FF");
  REQUIRE(ref.at("cases").size() >= 7);
  for (const auto& c : ref.at("cases")) {
    INFO("case: ", c.at("name").get<std::string>());
    const auto& o = c.at("options");
    nn::TransformerActivation act = o.at("activation") == "gelu" ? nn::TransformerActivation(kGELU)
                                                                 : nn::TransformerActivation(kReLU);
    std::vector<Tensor> x;
    for (const auto& in : c.at("inputs")) x.push_back(tensor_from_json(in));
    x[0].requires_grad_(true);
    Tensor out;
    const std::string kind = c.at("kind");
    if (kind == "decoder_layer") {
      x[1].requires_grad_(true);
      nn::TransformerDecoderLayer m(nn::TransformerDecoderLayerOptions(E, H).dim_feedforward(FF).activation(act).norm_first(o.at("norm_first")));
      m->to(kFloat64);
      m->eval();
      load_parameters(*m, c.at("state"));
      out = m->forward(x[0], x[1], x[2].to(kBool));
    } else {
      auto lo = nn::TransformerEncoderLayerOptions(E, H).dim_feedforward(FF).activation(act).norm_first(o.at("norm_first")).batch_first(o.at("batch_first"));
      if (kind == "encoder_layer") {
        nn::TransformerEncoderLayer m(lo);
        m->to(kFloat64);
        m->eval();
        load_parameters(*m, c.at("state"));
        out = m->forward(x[0], x[1].to(kBool));
      } else {
        nn::TransformerEncoder m(nn::TransformerEncoderOptions(lo, o.at("num_layers")).norm(nn::LayerNorm(nn::LayerNormOptions({E}))));
        m->to(kFloat64);
        m->eval();
        load_parameters(*m, c.at("state"));
        out = m->forward(x[0], {}, x[1].to(kBool));
      }
    }
    check_close(out, tensor_from_json(c.at("out")), 1e-9);
    out.backward(tensor_from_json(c.at("grad")));
    for (size_t i = 0; i < c.at("grads").size(); ++i) check_close(x[i].grad(), tensor_from_json(c.at("grads")[i]), 1e-9);
  }
}

TEST_CASE("TransformerEncoder: layers start identical (as libtorch's clones) and are separate parameters") {
  nn::TransformerEncoder enc(nn::TransformerEncoderOptions(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16), 3));
  auto params = enc->named_parameters();
  CHECK(params.contains("layers.2.self_attn.in_proj_weight"));
  CHECK(params["layers.0.linear1.weight"].equal(params["layers.2.linear1.weight"]));
  CHECK(params["layers.0.linear1.weight"].data_ptr() != params["layers.2.linear1.weight"].data_ptr());
  CHECK_FALSE(params.contains("norm.weight"));
}
