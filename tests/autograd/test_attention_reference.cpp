// scaled_dot_product_attention against PyTorch's F.scaled_dot_product_attention
// (tests/data/attention_reference.json, made by make_attention_reference.py): outputs and the
// gradients of query, key, value and a float mask, float64.
#include "reference_util.h"

using namespace gr;
using gr::test::check_close;
using gr::test::load_reference;
using gr::test::tensor_from_json;

TEST_CASE("scaled_dot_product_attention matches PyTorch's values and gradients") {
  const nlohmann::json ref = load_reference("attention_reference.json");
  REQUIRE(ref.at("cases").size() >= 7);
  for (const auto& c : ref.at("cases")) {
    INFO("case: ", c.at("name").get<std::string>());
    Tensor q = tensor_from_json(c.at("query")).requires_grad_(true);
    Tensor k = tensor_from_json(c.at("key")).requires_grad_(true);
    Tensor v = tensor_from_json(c.at("value")).requires_grad_(true);
    Tensor mask;
    if (c.contains("mask")) {
      mask = tensor_from_json(c.at("mask"));
      if (c.at("mask_dtype") == "bool") mask = mask.to(kBool);
      else mask.requires_grad_(true);
    }
    std::optional<double> scale;
    if (!c.at("scale").is_null()) scale = c.at("scale").get<double>();
    Tensor out = scaled_dot_product_attention(q, k, v, mask, 0.0, c.at("is_causal").get<bool>(), scale);
    check_close(out, tensor_from_json(c.at("out")), 1e-10);
    out.backward(tensor_from_json(c.at("grad")));
    check_close(q.grad(), tensor_from_json(c.at("grad_query")), 1e-10);
    check_close(k.grad(), tensor_from_json(c.at("grad_key")), 1e-10);
    check_close(v.grad(), tensor_from_json(c.at("grad_value")), 1e-10);
    if (c.contains("grad_mask")) check_close(mask.grad(), tensor_from_json(c.at("grad_mask")), 1e-10);
  }
}
