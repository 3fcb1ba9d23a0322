// OpInfo entries of the norm branch (normalisation, embeddings, activations), gradchecked and
// gradgradchecked in float64 by test_op_info.cpp. Activation inputs stay away from their kinks.
#include "op_info.h"

namespace gr::testing {

GR_OP_INFOS(add_norm_op_infos) {
  ops.push_back({"layer_norm", [] { return TensorList{op_input({2, 3, 5}, 1601), op_input({5}, 1602), op_input({5}, 1603)}; },
                 [](const TensorList& t) { return layer_norm(t[0], {5}, t[1], t[2]); }});
  ops.push_back({"layer_norm", [] { return TensorList{op_input({3, 2, 4}, 1604)}; },
                 [](const TensorList& t) { return layer_norm(t[0], {2, 4}, {}, {}, 1e-3); }});
}

}  // namespace gr::testing

namespace gr::testing {

GR_OP_INFOS(add_embedding_op_infos) {
  ops.push_back({"embedding", [] { return TensorList{op_input({6, 3}, 1611)}; },
                 [](const TensorList& t) {
                   // (padding_idx and scale_grad_by_freq change the gradient on purpose, so it is no
                   // longer the derivative: test_norm_reference.cpp checks them against PyTorch.)
                   return embedding(t[0], tensor({{1, 2, 1}, {5, 0, 2}}, TensorOptions(kInt64)));
                 }});
  ops.push_back({"embedding_bag", [] { return TensorList{op_input({6, 3}, 1612), op_input({7}, 1613)}; },
                 [](const TensorList& t) {
                   return std::get<0>(embedding_bag(t[0], tensor({1, 2, 1, 5, 0, 2, 4}, TensorOptions(kInt64)),
                                                    tensor({0, 3, 3}, TensorOptions(kInt64)), false, 0, false, t[1]));
                 }});
  ops.push_back({"embedding_bag", [] { return TensorList{op_input({6, 3}, 1614)}; },
                 [](const TensorList& t) {
                   return std::get<0>(embedding_bag(t[0], tensor({1, 2, 1, 5, 0, 2, 4}, TensorOptions(kInt64)),
                                                    tensor({0, 3, 3}, TensorOptions(kInt64)), false, 1, false, {},
                                                    false, 2));
                 }});
  ops.push_back({"embedding_bag(max)", [] { return TensorList{op_input({6, 3}, 1615)}; },
                 [](const TensorList& t) {
                   return std::get<0>(embedding_bag(t[0], tensor({1, 2, 1, 5, 0, 2, 4}, TensorOptions(kInt64)),
                                                    tensor({0, 3, 3}, TensorOptions(kInt64)), false, 2));
                 }});
}

}  // namespace gr::testing

namespace gr::testing {

namespace {
// |values| >= 0.3 with random signs: away from the kinks of leaky_relu, elu and prelu at 0.
Tensor off_zero(std::vector<int64_t> shape, uint64_t seed) {
  Tensor x = op_input(shape, seed);
  return (x + x.sign() * 0.3).detach().requires_grad_(true);
}
}  // namespace

GR_OP_INFOS(add_activation_op_infos) {
  auto one = [&ops](const char* name, std::function<Tensor(const Tensor&)> f, std::function<Tensor()> in) {
    ops.push_back({name, [in] { return TensorList{in()}; }, [f](const TensorList& t) { return f(t[0]); }});
  };
  auto normal = [] { return op_input({3, 4}, 1621) * 2; };
  auto leaf = [normal] { return normal().detach().requires_grad_(true); };
  one("gelu", [](const Tensor& x) { return gelu(x); }, leaf);
  one("gelu", [](const Tensor& x) { return gelu(x, "tanh"); }, leaf);
  one("silu", silu, leaf);
  one("mish", mish, leaf);
  one("leaky_relu", [](const Tensor& x) { return leaky_relu(x, 0.2); }, [] { return off_zero({3, 4}, 1622); });
  one("elu", [](const Tensor& x) { return elu(x, 0.7, 1.2, 0.9); }, [] { return off_zero({3, 4}, 1623); });
  one("selu", selu, [] { return off_zero({3, 4}, 1624); });
  // Away from the bounds -1 and 1 (clamp's kinks).
  auto fixed = [](std::vector<double> v) {
    return [v] { return tensor(v, TensorOptions(kFloat64)).reshape({2, -1}).requires_grad_(true); };
  };
  one("hardtanh", [](const Tensor& x) { return hardtanh(x, -0.5, 1.5); }, fixed({-2.0, -0.7, -0.3, 0.4, 1.2, 1.9}));
  one("relu6", relu6, fixed({-2.0, -0.3, 0.4, 3.0, 5.5, 7.9}));
  ops.push_back({"prelu", [] { return TensorList{off_zero({2, 3, 4}, 1627), op_input({3}, 1628)}; },
                 [](const TensorList& t) { return prelu(t[0], t[1]); }});
  ops.push_back({"prelu", [] { return TensorList{off_zero({2, 3}, 1629), op_input({1}, 1630)}; },
                 [](const TensorList& t) { return prelu(t[0], t[1]); }});
}

}  // namespace gr::testing

namespace gr::testing {

GR_OP_INFOS(add_norm_family_op_infos) {
  ops.push_back({"rms_norm", [] { return TensorList{op_input({2, 3, 4}, 1641), op_input({4}, 1642)}; },
                 [](const TensorList& t) { return rms_norm(t[0], {4}, t[1], 1e-3); }});
  ops.push_back({"rms_norm", [] { return TensorList{op_input({2, 3, 4}, 1643)}; },
                 [](const TensorList& t) { return rms_norm(t[0], {3, 4}); }});
  ops.push_back({"group_norm",
                 [] { return TensorList{op_input({2, 4, 3}, 1644), op_input({4}, 1645), op_input({4}, 1646)}; },
                 [](const TensorList& t) { return group_norm(t[0], 2, t[1], t[2]); }});
  ops.push_back({"instance_norm",
                 [] { return TensorList{op_input({2, 3, 2, 2}, 1647), op_input({3}, 1648), op_input({3}, 1649)}; },
                 [](const TensorList& t) { return instance_norm(t[0], t[1], t[2], {}, {}, true, 0.1, 1e-5); }});
}

}  // namespace gr::testing
