// Every layer's forward, input gradient, parameter gradients and running statistics against
// PyTorch (tests/data/layer_reference.json, made by make_layer_reference.py).
#include "reference_util.h"

using namespace gr;
using gr::test::check_close;
using gr::test::tensor_from_json;

namespace {

std::shared_ptr<nn::Module> build(const std::string& name) {
  using namespace gr::nn;
  if (name == "linear") return Linear(5, 3).ptr();
  if (name == "linear_nobias_3d") return Linear(LinearOptions(4, 2).bias(false)).ptr();
  if (name == "conv2d") return Conv2d(2, 3, 3).ptr();
  if (name == "conv2d_strided_padded_grouped")
    return Conv2d(Conv2dOptions(4, 6, {3, 2}).stride({2, 1}).padding({1, 2}).dilation({1, 2}).groups(2)).ptr();
  if (name == "batchnorm2d_train" || name == "batchnorm2d_eval") return BatchNorm2d(3).ptr();
  if (name == "batchnorm2d_cumulative") return BatchNorm2d(BatchNorm2dOptions(2).momentum(std::nullopt)).ptr();
  if (name == "batchnorm2d_no_affine") return BatchNorm2d(BatchNorm2dOptions(2).affine(false)).ptr();
  if (name == "maxpool2d") return MaxPool2d(2).ptr();
  if (name == "maxpool2d_padded_ceil") return MaxPool2d(MaxPool2dOptions(3).stride(2).padding(1).ceil_mode(true)).ptr();
  if (name == "avgpool2d") return AvgPool2d(AvgPool2dOptions(2).stride(1)).ptr();
  if (name == "adaptiveavgpool2d") return AdaptiveAvgPool2d(AdaptiveAvgPool2dOptions({2, 3})).ptr();
  if (name == "relu") return ReLU().ptr();
  if (name == "flatten") return Flatten().ptr();
  if (name == "logsoftmax") return LogSoftmax(1).ptr();
  if (name == "sequential_reference_cnn_head")
    return Sequential(Conv2d(1, 4, 3), BatchNorm2d(4), ReLU(), MaxPool2d(2), Flatten(), Linear(36, 5), LogSoftmax(1))
        .ptr();
  FAIL("unknown case ", name);
  return nullptr;
}

// Calls forward on any of the layer types above.
Tensor forward(nn::Module& m, const Tensor& x) {
  if (auto* s = dynamic_cast<nn::SequentialImpl*>(&m)) return s->forward(x);
  if (auto* l = dynamic_cast<nn::LinearImpl*>(&m)) return l->forward(x);
  if (auto* c = dynamic_cast<nn::Conv2dImpl*>(&m)) return c->forward(x);
  if (auto* b = dynamic_cast<nn::BatchNorm2dImpl*>(&m)) return b->forward(x);
  if (auto* p = dynamic_cast<nn::MaxPool2dImpl*>(&m)) return p->forward(x);
  if (auto* p = dynamic_cast<nn::AvgPool2dImpl*>(&m)) return p->forward(x);
  if (auto* p = dynamic_cast<nn::AdaptiveAvgPool2dImpl*>(&m)) return p->forward(x);
  if (auto* r = dynamic_cast<nn::ReLUImpl*>(&m)) return r->forward(x);
  if (auto* f = dynamic_cast<nn::FlattenImpl*>(&m)) return f->forward(x);
  if (auto* l = dynamic_cast<nn::LogSoftmaxImpl*>(&m)) return l->forward(x);
  FAIL("no forward for ", m.name());
  return {};
}

OrderedDict<Tensor> state_from_json(const nlohmann::json& j, const nn::Module& like) {
  OrderedDict<Tensor> state;
  for (const auto& [key, t] : like.state_dict()) state.insert(key, tensor_from_json(j.at(key), t.scalar_type()));
  return state;
}

}  // namespace

TEST_CASE("layers match PyTorch: outputs, gradients, running statistics") {
  nlohmann::json ref = gr::test::load_reference("layer_reference.json");
  for (const auto& c : ref.at("cases")) {
    std::string name = c.at("name");
    CAPTURE(name);
    std::shared_ptr<nn::Module> layer = build(name);
    layer->to(kFloat64);
    REQUIRE(layer->state_dict().keys().size() == c.at("state").size());
    layer->load_state_dict(state_from_json(c.at("state"), *layer));
    layer->train(c.at("train").get<bool>());
    for (const auto& step : c.at("steps")) {
      Tensor x = tensor_from_json(step.at("input")).requires_grad_(true);
      Tensor y = forward(*layer, x);
      check_close(y, tensor_from_json(step.at("output")), 1e-10);
      layer->zero_grad();
      y.backward(tensor_from_json(step.at("upstream")));
      check_close(x.grad(), tensor_from_json(step.at("input_grad")), 1e-10);
      for (const auto& [pname, p] : layer->named_parameters()) {
        CAPTURE(pname);
        check_close(p.grad(), tensor_from_json(step.at("param_grads").at(pname)), 1e-10);
      }
      for (const auto& [key, t] : layer->state_dict()) {
        CAPTURE(key);
        check_close(t, tensor_from_json(step.at("state_after").at(key), t.scalar_type()), 1e-10);
      }
    }
  }
}
