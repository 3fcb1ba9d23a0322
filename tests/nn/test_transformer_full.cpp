// nn::Transformer and nn::TransformerDecoder against torch.nn's (tests/data/shape_reference.json,
// make_shape_reference.py): PyTorch's state_dict names, outputs and input gradients with masks
// (causal float tgt_mask, key padding, memory mask), post-norm/relu and batch_first/norm_first/
// gelu; the square subsequent mask, custom encoders, copies and the errors.
#include <cmath>
#include "reference_util.h"

using namespace gr;
using gr::test::check_close;
using gr::test::error_of;
using gr::test::load_reference;
using gr::test::load_parameters;
using gr::test::tensor_from_json;

namespace {

nn::TransformerActivation activation(const nlohmann::json& o) {
  return o.at("activation") == "gelu" ? nn::TransformerActivation(kGELU) : nn::TransformerActivation(kReLU);
}
}  // namespace

TEST_CASE("Transformer and TransformerDecoder match PyTorch: state_dict names, outputs and gradients") {
  const nlohmann::json ref = load_reference("shape_reference.json");
  const int64_t E = ref.at("E"), H = ref.at("H"), FF = ref.at("FF");
  REQUIRE(ref.at("transformer").size() >= 3);
  for (const auto& c : ref.at("transformer")) {
    INFO("case: ", c.at("name").get<std::string>());
    const auto& o = c.at("options");
    std::vector<Tensor> x;
    for (const auto& in : c.at("inputs")) x.push_back(tensor_from_json(in));
    x[0].requires_grad_(true);
    x[1].requires_grad_(true);
    Tensor out;
    if (c.at("kind") == "transformer") {
      nn::Transformer m(nn::TransformerOptions(E, H, o.at("num_encoder_layers"), o.at("num_decoder_layers"))
                            .dim_feedforward(FF)
                            .dropout(0.0)
                            .activation(activation(o))
                            .batch_first(o.at("batch_first"))
                            .norm_first(o.at("norm_first")));
      m->to(kFloat64);
      m->eval();
      load_parameters(*m, c.at("state"));
      const int64_t T = x[1].size(o.at("batch_first") ? 1 : 0);
      Tensor tgt_mask = nn::TransformerImpl::generate_square_subsequent_mask(T).to(kFloat64);
      Tensor src_kpm = x[2].to(kBool), tgt_kpm = x[3].to(kBool);
      out = m->forward(x[0], x[1], {}, tgt_mask, {}, src_kpm, tgt_kpm, src_kpm);
    } else {
      nn::TransformerDecoder m(nn::TransformerDecoderOptions(
                                   nn::TransformerDecoderLayer(nn::TransformerDecoderLayerOptions(E, H)
                                                                   .dim_feedforward(FF)
                                                                   .dropout(0.0)
                                                                   .activation(activation(o))),
                                   o.at("num_layers"))
                                   .norm(nn::LayerNorm(nn::LayerNormOptions({E}))));
      m->to(kFloat64);
      m->eval();
      load_parameters(*m, c.at("state"));
      out = m->forward(x[0], x[1], {}, x[2].to(kBool));
    }
    check_close(out, tensor_from_json(c.at("out")), 1e-9);
    out.backward(tensor_from_json(c.at("grad")));
    for (size_t i = 0; i < c.at("grads").size(); ++i) check_close(x[i].grad(), tensor_from_json(c.at("grads")[i]), 1e-9);
  }
}

TEST_CASE("Transformer::generate_square_subsequent_mask: -inf above the diagonal, 0 elsewhere") {
  Tensor m = nn::TransformerImpl::generate_square_subsequent_mask(4);
  REQUIRE(m.sizes() == IntArrayRef({4, 4}));
  CHECK(m.scalar_type() == kFloat32);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 4; ++j) {
      const float v = m.index({i, j}).item<float>();
      if (j > i) CHECK((std::isinf(v) && v < 0));
      else CHECK(v == 0.0f);
    }
  CHECK(nn::TransformerImpl::generate_square_subsequent_mask(0).numel() == 0);
  CHECK(error_of([] { nn::TransformerImpl::generate_square_subsequent_mask(-1); })
            .find("size must be non-negative, but got -1") != std::string::npos);
}

TEST_CASE("TransformerDecoder: layers start as copies of the given layer and are separate parameters") {
  nn::TransformerDecoderLayer layer(nn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(16));
  nn::TransformerDecoder dec(nn::TransformerDecoderOptions(layer, 3));
  auto params = dec->named_parameters();
  CHECK(params.contains("layers.2.multihead_attn.in_proj_weight"));
  CHECK_FALSE(params.contains("norm.weight"));
  for (int i = 0; i < 3; ++i) {
    Tensor w = params["layers." + std::to_string(i) + ".linear1.weight"];
    CHECK(w.equal(layer->linear1->weight));
    CHECK(w.data_ptr() != layer->linear1->weight.data_ptr());
  }
  // Built from options: the same structure, one fresh layer copied.
  nn::TransformerDecoder from_options(nn::TransformerDecoderOptions(nn::TransformerDecoderLayerOptions(8, 2), 2));
  auto p = from_options->named_parameters();
  CHECK(p["layers.0.linear2.weight"].equal(p["layers.1.linear2.weight"]));
}

TEST_CASE("Transformer: PyTorch's module tree, Xavier init per parameter, custom encoder and decoder") {
  nn::Transformer t(nn::TransformerOptions(8, 2, 2, 1).dim_feedforward(16).dropout(0.0));
  auto p = t->named_parameters();
  CHECK(p.contains("encoder.layers.1.self_attn.in_proj_weight"));
  CHECK(p.contains("encoder.norm.weight"));
  CHECK(p.contains("decoder.layers.0.multihead_attn.out_proj.weight"));
  CHECK(p.contains("decoder.norm.bias"));
  CHECK_FALSE(p.contains("decoder.layers.1.linear1.weight"));
  // reset_parameters draws every matrix anew, so the cloned layers differ afterwards (as torch).
  CHECK_FALSE(p["encoder.layers.0.linear1.weight"].equal(p["encoder.layers.1.linear1.weight"]));
  const double bound = std::sqrt(6.0 / (8 + 16));  // xavier_uniform_ of linear1 [16, 8]
  CHECK(p["encoder.layers.0.linear1.weight"].abs().max().item<float>() <= bound);
  CHECK(p["encoder.norm.weight"].equal(ones({8})));  // 1-D parameters keep their init
  Tensor src = randn({5, 3, 8}), tgt = randn({4, 3, 8});
  CHECK(t->forward(src, tgt).sizes() == IntArrayRef({4, 3, 8}));

  nn::TransformerEncoder enc(nn::TransformerEncoderOptions(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16), 1));
  nn::TransformerDecoder dec(nn::TransformerDecoderOptions(nn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(16), 1));
  nn::Transformer custom(nn::TransformerOptions(8, 2).custom_encoder(enc).custom_decoder(dec));
  auto q = custom->named_parameters();
  CHECK_FALSE(q.contains("encoder.norm.weight"));
  CHECK_FALSE(q.contains("encoder.layers.1.linear1.weight"));
  CHECK(q["encoder.layers.0.linear1.bias"].equal(enc->layers[0]->linear1->bias));  // 1-D: copied, not re-drawn
  CHECK(q["encoder.layers.0.linear1.bias"].data_ptr() != enc->layers[0]->linear1->bias.data_ptr());
}

TEST_CASE("Transformer errors name the shapes") {
  nn::Transformer t(nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(16));
  CHECK(error_of([&] { t->forward(randn({5, 8}), randn({4, 3, 8})); })
            .find("src and tgt should have 3 dimensions, but got 2 and 3") != std::string::npos);
  CHECK(error_of([&] { t->forward(randn({5, 2, 8}), randn({4, 3, 8})); })
            .find("src and tgt should have equal batch size (at dim 1), but got 2 and 3") != std::string::npos);
  CHECK(error_of([&] { t->forward(randn({5, 3, 8}), randn({4, 3, 6})); })
            .find("same feature size as d_model (at dim 2), but got 8 and 6 while d_model is 8") != std::string::npos);
  CHECK(error_of([] { nn::TransformerDecoder(nn::TransformerDecoderOptions(nn::TransformerDecoderLayerOptions(8, 2), 0)); })
            .find("num_layers must be positive") != std::string::npos);
}
