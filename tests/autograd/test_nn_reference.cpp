// Functional nn ops against PyTorch 1.13: replays every case of tests/data/nn_reference.json
// (made by make_nn_reference.py) and compares outputs, max-pool indices, updated running
// statistics and input gradients to 1e-10.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <gradring/gradring.h>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compare.h"

using namespace gr;
using json = nlohmann::json;

namespace {

const json& reference() {
  static const json data = [] {
    std::ifstream in(std::string(GRADRING_TEST_DATA) + "/nn_reference.json");
    REQUIRE_MESSAGE(in.good(), "cannot open nn_reference.json; run tests/data/make_nn_reference.py");
    return json::parse(in);
  }();
  return data;
}

// {"shape": [...], "dtype": "float64" | "int64", "values": [...]} as a tensor.
Tensor from_json(const json& j) {
  const auto shape = j.at("shape").get<std::vector<int64_t>>();
  Tensor t = j.at("dtype") == "int64" ? tensor(j.at("values").get<std::vector<int64_t>>(), kInt64)
                             : tensor(j.at("values").get<std::vector<double>>(), kFloat64);
  return t.reshape(shape);
}

void check_matches(const Tensor& actual, const json& expected, const char* what, double tol = 1e-10) {
  CAPTURE(what);
  const auto shape = expected.at("shape").get<std::vector<int64_t>>();
  REQUIRE(actual.sizes().vec() == shape);
  const auto values = expected.at("values").get<std::vector<double>>();
  Tensor c = actual.detach().to(kFloat64).contiguous();
  const double* p = c.data_ptr<double>();
  int64_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    const double err = std::fabs(p[i] - values[i]) / (1.0 + std::fabs(values[i]));
    if (!(err <= tol)) ++bad;
    worst = test::max_nan(worst, err);
  }
  CAPTURE(worst);
  CHECK(bad == 0);
}

Reduction reduction_of(const std::string& s) {
  if (s == "none") return Reduction::None;
  if (s == "sum") return Reduction::Sum;
  return Reduction::Mean;
}

// The case's inputs as tensors (targets int64); those with a recorded gradient require grad.
std::map<std::string, Tensor> inputs_of(const json& c) {
  std::map<std::string, Tensor> in;
  for (const auto& [name, value] : c.at("inputs").items()) {
    Tensor t = from_json(value);
    if (c.at("grads").contains(name)) t.requires_grad_(true);
    in[name] = t;
  }
  return in;
}

// Runs every case of `op`: f computes the outputs by name from the inputs; "output" gets
// the upstream gradient, then every output and gradient is compared.
void replay(const std::string& op,
            const std::function<std::map<std::string, Tensor>(const json& args, std::map<std::string, Tensor>& in)>& f) {
  int cases = 0;
  for (const json& c : reference().at("cases")) {
    if (c.at("op") != op) continue;
    ++cases;
    std::string args = c.at("args").dump();
    CAPTURE(op);
    CAPTURE(args);
    std::map<std::string, Tensor> in = inputs_of(c);
    std::map<std::string, Tensor> out = f(c.at("args"), in);
    out.at("output").backward(from_json(c.at("upstream")));
    for (const auto& [name, expected] : c.at("outputs").items()) {
      REQUIRE(out.count(name) == 1);
      check_matches(out.at(name), expected, name.c_str());
    }
    for (const auto& [name, expected] : c.at("grads").items()) check_matches(in.at(name).grad(), expected, name.c_str());
  }
  CHECK(cases > 0);
}

std::vector<int64_t> ints(const json& j) { return j.get<std::vector<int64_t>>(); }

}  // namespace

TEST_CASE("max_pool2d matches PyTorch (values, indices, gradient)") {
  replay("max_pool2d", [](const json& a, std::map<std::string, Tensor>& in) {
    auto [out, idx] = max_pool2d_with_indices(in["input"], ints(a["kernel_size"]), ints(a["stride"]),
                                              ints(a["padding"]), ints(a["dilation"]), a["ceil_mode"].get<bool>());
    return std::map<std::string, Tensor>{{"output", out}, {"indices", idx}};
  });
}

TEST_CASE("avg_pool2d matches PyTorch") {
  replay("avg_pool2d", [](const json& a, std::map<std::string, Tensor>& in) {
    return std::map<std::string, Tensor>{
        {"output", avg_pool2d(in["input"], ints(a["kernel_size"]), ints(a["stride"]), ints(a["padding"]),
                              a["ceil_mode"].get<bool>(), a["count_include_pad"].get<bool>())}};
  });
}

TEST_CASE("adaptive_avg_pool2d matches PyTorch") {
  replay("adaptive_avg_pool2d", [](const json& a, std::map<std::string, Tensor>& in) {
    return std::map<std::string, Tensor>{{"output", adaptive_avg_pool2d(in["input"], ints(a["output_size"]))}};
  });
}

TEST_CASE("batch_norm matches PyTorch (train with running-stat update, eval, affine or not)") {
  replay("batch_norm", [](const json& a, std::map<std::string, Tensor>& in) {
    Tensor w = in.count("weight") ? in["weight"] : Tensor(), b = in.count("bias") ? in["bias"] : Tensor();
    Tensor out = batch_norm(in["input"], w, b, in["running_mean"], in["running_var"], a["training"].get<bool>(),
                            a["momentum"].get<double>(), a["eps"].get<double>());
    return std::map<std::string, Tensor>{
        {"output", out}, {"running_mean", in["running_mean"]}, {"running_var", in["running_var"]}};
  });
}

TEST_CASE("log_softmax matches PyTorch") {
  replay("log_softmax", [](const json& a, std::map<std::string, Tensor>& in) {
    return std::map<std::string, Tensor>{{"output", log_softmax(in["input"], a["dim"].get<int64_t>())}};
  });
}

TEST_CASE("nll_loss and cross_entropy match PyTorch (reductions, weight, ignore_index)") {
  for (const char* op : {"nll_loss", "cross_entropy"}) {
    const bool ce = std::string(op) == "cross_entropy";
    replay(op, [ce](const json& a, std::map<std::string, Tensor>& in) {
      Tensor w = in.count("weight") ? in["weight"] : Tensor();
      Reduction r = reduction_of(a["reduction"].get<std::string>());
      int64_t ignore = a["ignore_index"].get<int64_t>();
      Tensor out = ce ? cross_entropy(in["input"], in["target"], w, r, ignore)
                      : nll_loss(in["input"], in["target"], w, r, ignore);
      return std::map<std::string, Tensor>{{"output", out}};
    });
  }
}

TEST_CASE("mse_loss matches PyTorch") {
  replay("mse_loss", [](const json& a, std::map<std::string, Tensor>& in) {
    return std::map<std::string, Tensor>{
        {"output", mse_loss(in["input"], in["target"], reduction_of(a["reduction"].get<std::string>()))}};
  });
}
