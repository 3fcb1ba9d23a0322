// OpInfo entries of scaled_dot_product_attention (nn breadth: attention): gradchecked and
// gradgradchecked in float64 by test_op_info.cpp (the second order runs the composite, see
// autograd/functions/attention.cpp). Small sizes: gradgradcheck is quadratic in them.
#include "op_info.h"

using namespace gr;
using gr::testing::op_input;
using gr::testing::OpInfo;

namespace {
TensorList qkv(std::vector<int64_t> q, std::vector<int64_t> k, std::vector<int64_t> v, uint64_t seed) {
  return {op_input(q, seed), op_input(k, seed + 1), op_input(v, seed + 2)};
}
Tensor float_mask(std::vector<int64_t> shape, uint64_t seed) {
  Generator g(seed);
  return randn(shape, TensorOptions(kFloat64), &g);
}
}  // namespace

GR_OP_INFOS(add_attention_ops) {
  ops.push_back({"scaled_dot_product_attention", [] { return qkv({2, 3, 4}, {2, 5, 4}, {2, 5, 3}, 900); },
                 [](const TensorList& t) { return scaled_dot_product_attention(t[0], t[1], t[2]); }});
  ops.push_back({"scaled_dot_product_attention(is_causal)", [] { return qkv({1, 2, 5, 3}, {1, 2, 4, 3}, {1, 2, 4, 2}, 903); },
                 [](const TensorList& t) { return scaled_dot_product_attention(t[0], t[1], t[2], {}, 0.0, true); }});
  ops.push_back({"scaled_dot_product_attention(bool mask)", [] { return qkv({2, 4, 3}, {2, 5, 3}, {2, 5, 2}, 906); },
                 [](const TensorList& t) {
                   Tensor mask = float_mask({4, 5}, 909).gt(-0.5).index_fill(1, tensor({int64_t(0)}, TensorOptions(kInt64)), true);
                   return scaled_dot_product_attention(t[0], t[1], t[2], mask);
                 }});
  ops.push_back({"scaled_dot_product_attention(float mask, scale)", [] { return qkv({2, 3, 4}, {1, 6, 4}, {6, 2}, 910); },
                 [](const TensorList& t) {
                   return scaled_dot_product_attention(t[0], t[1], t[2], float_mask({2, 3, 6}, 913), 0.0, false, 0.7);
                 }});
  ops.push_back({"scaled_dot_product_attention(dropout, fixed seed)", [] { return qkv({2, 4, 3}, {2, 5, 3}, {2, 5, 3}, 914); },
                 [](const TensorList& t) {
                   manual_seed(17);  // the same dropout mask on every evaluation
                   return scaled_dot_product_attention(t[0], t[1], t[2], {}, 0.4);
                 }});
  ops.push_back({"scaled_dot_product_attention(attn_mask requires grad)",
                 [] { return TensorList{op_input({2, 3, 4}, 917), op_input({2, 4, 4}, 918), op_input({2, 4, 2}, 919), op_input({3, 4}, 920)}; },
                 [](const TensorList& t) { return scaled_dot_product_attention(t[0], t[1], t[2], t[3]); }});
}
