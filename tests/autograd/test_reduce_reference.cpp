// Reductions and linear algebra against PyTorch (tests/data/reduce_reference.json, made by
// make_reduce_reference.py): every case's outputs (values, shape and dtype) and, where torch
// recorded them, the input gradients for a fixed upstream gradient (ties, zeros, NaN).
#include <cmath>
#include <functional>
#include <map>
#include <string>

#include "reference_util.h"

using namespace gr;
using nlohmann::json;

namespace {

ScalarType dtype_of(const std::string& s) {
  static const std::map<std::string, ScalarType> names{{"float64", kFloat64}, {"float32", kFloat32},
                                                       {"int64", kInt64},     {"uint8", kUInt8},
                                                       {"bool", kBool},       {"bfloat16", kBFloat16},
                                                       {"float16", kFloat16}};
  return names.at(s);
}

double number(const json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    return s == "nan" ? NAN : s == "inf" ? INFINITY : -INFINITY;
  }
  return v.get<double>();
}

Tensor decode(const json& j) {
  std::vector<double> values;
  for (const json& v : j.at("values")) values.push_back(number(v));
  const ScalarType t = dtype_of(j.at("dtype"));
  Tensor f = tensor(values, TensorOptions(kFloat64)).reshape(j.at("shape").get<std::vector<int64_t>>());
  return f.to(t);
}

std::vector<int64_t> ints(const json& j) { return j.get<std::vector<int64_t>>(); }
std::optional<ScalarType> opt_dtype(const json& args) {
  if (!args.contains("dtype")) return std::nullopt;
  return dtype_of(args.at("dtype"));
}
std::optional<int64_t> opt_dim(const json& args) {
  if (args.at("dim").is_null()) return std::nullopt;
  return args.at("dim").get<int64_t>();
}
double ord(const json& v) { return number(v); }
TensorList pair(const std::tuple<Tensor, Tensor>& t) { return {std::get<0>(t), std::get<1>(t)}; }

using Op = std::function<TensorList(const TensorList&, const json&)>;

// Each reference op name as the gr:: call a libtorch user writes.
const std::map<std::string, Op>& ops() {
  static const std::map<std::string, Op> table{
      {"sum", [](const TensorList& x, const json& a) {
         return TensorList{sum(x[0], ints(a["dims"]), a["keepdim"].get<bool>(), opt_dtype(a))};
       }},
      {"mean", [](const TensorList& x, const json& a) {
         return TensorList{mean(x[0], ints(a["dims"]), a["keepdim"].get<bool>(), opt_dtype(a))};
       }},
      {"prod", [](const TensorList& x, const json& a) {
         auto d = opt_dim(a);
         return TensorList{d ? prod(x[0], *d, a["keepdim"].get<bool>()) : prod(x[0])};
       }},
      {"var", [](const TensorList& x, const json& a) {
         return TensorList{var(x[0], ints(a["dims"]), Scalar(a["correction"].get<int64_t>()), a["keepdim"].get<bool>())};
       }},
      {"std", [](const TensorList& x, const json& a) {
         return TensorList{x[0].std(ints(a["dims"]), Scalar(a["correction"].get<int64_t>()), a["keepdim"].get<bool>())};
       }},
      {"var_mean", [](const TensorList& x, const json& a) {
         return pair(var_mean(x[0], ints(a["dims"]), Scalar(a["correction"].get<int64_t>()), a["keepdim"].get<bool>()));
       }},
      {"std_mean", [](const TensorList& x, const json& a) {
         return pair(std_mean(x[0], ints(a["dims"]), Scalar(a["correction"].get<int64_t>()), a["keepdim"].get<bool>()));
       }},
      {"norm", [](const TensorList& x, const json& a) {
         const auto dims = ints(a["dims"]);
         if (dims.empty()) return TensorList{norm(x[0], ord(a["p"]))};
         return TensorList{x[0].norm(ord(a["p"]), dims, a["keepdim"].get<bool>())};
       }},
      {"norm_fro", [](const TensorList& x, const json& a) {
         return TensorList{norm(x[0], "fro", ints(a["dims"]), a["keepdim"].get<bool>())};
       }},
      {"vector_norm", [](const TensorList& x, const json& a) {
         return TensorList{linalg::vector_norm(x[0], ord(a["ord"]), ints(a["dims"]), a["keepdim"].get<bool>(),
                                               opt_dtype(a))};
       }},
      {"matrix_norm", [](const TensorList& x, const json& a) {
         const auto dims = ints(a["dims"]);
         if (a["ord"] == "fro") return TensorList{linalg::matrix_norm(x[0], "fro", dims, a["keepdim"].get<bool>())};
         return TensorList{linalg::matrix_norm(x[0], ord(a["ord"]), dims, a["keepdim"].get<bool>())};
       }},
      {"logsumexp", [](const TensorList& x, const json& a) {
         return TensorList{logsumexp(x[0], ints(a["dims"]), a["keepdim"].get<bool>())};
       }},
      {"cumsum", [](const TensorList& x, const json& a) {
         return TensorList{x[0].cumsum(a["dim"].get<int64_t>(), opt_dtype(a))};
       }},
      {"cumprod", [](const TensorList& x, const json& a) {
         return TensorList{cumprod(x[0], a["dim"].get<int64_t>(), opt_dtype(a))};
       }},
      {"amax", [](const TensorList& x, const json& a) {
         return TensorList{amax(x[0], ints(a["dims"]), a["keepdim"].get<bool>())};
       }},
      {"amin", [](const TensorList& x, const json& a) {
         return TensorList{x[0].amin(ints(a["dims"]), a["keepdim"].get<bool>())};
       }},
      {"max_all", [](const TensorList& x, const json&) { return TensorList{x[0].max()}; }},
      {"min_all", [](const TensorList& x, const json&) { return TensorList{min(x[0])}; }},
      {"max_dim", [](const TensorList& x, const json& a) {
         return pair(x[0].max(a["dim"].get<int64_t>(), a["keepdim"].get<bool>()));
       }},
      {"min_dim", [](const TensorList& x, const json& a) {
         return pair(min(x[0], a["dim"].get<int64_t>(), a["keepdim"].get<bool>()));
       }},
      {"argmax", [](const TensorList& x, const json& a) {
         return TensorList{argmax(x[0], opt_dim(a), a["keepdim"].get<bool>())};
       }},
      {"argmin", [](const TensorList& x, const json& a) {
         return TensorList{x[0].argmin(opt_dim(a), a["keepdim"].get<bool>())};
       }},
      {"median_all", [](const TensorList& x, const json&) { return TensorList{x[0].median()}; }},
      {"nanmedian_all", [](const TensorList& x, const json&) { return TensorList{nanmedian(x[0])}; }},
      {"median_dim", [](const TensorList& x, const json& a) {
         return pair(median(x[0], a["dim"].get<int64_t>(), a["keepdim"].get<bool>()));
       }},
      {"nanmedian_dim", [](const TensorList& x, const json& a) {
         return pair(x[0].nanmedian(a["dim"].get<int64_t>(), a["keepdim"].get<bool>()));
       }},
      {"any_all", [](const TensorList& x, const json&) { return TensorList{any(x[0])}; }},
      {"all_all", [](const TensorList& x, const json&) { return TensorList{x[0].all()}; }},
      {"any_dim", [](const TensorList& x, const json& a) {
         return TensorList{x[0].any(a["dim"].get<int64_t>(), a["keepdim"].get<bool>())};
       }},
      {"all_dim", [](const TensorList& x, const json& a) {
         return TensorList{all(x[0], a["dim"].get<int64_t>(), a["keepdim"].get<bool>())};
       }},
      {"count_nonzero", [](const TensorList& x, const json& a) {
         const auto dims = ints(a["dims"]);
         if (dims.empty()) return TensorList{count_nonzero(x[0])};
         if (dims.size() == 1) return TensorList{x[0].count_nonzero(std::optional<int64_t>(dims[0]))};
         return TensorList{count_nonzero(x[0], IntArrayRef(dims))};
       }},
      {"addmm", [](const TensorList& x, const json& a) {
         return TensorList{addmm(x[0], x[1], x[2], a["beta"].get<double>(), a["alpha"].get<double>())};
       }},
      {"addbmm", [](const TensorList& x, const json& a) {
         return TensorList{x[0].addbmm(x[1], x[2], a["beta"].get<double>(), a["alpha"].get<double>())};
       }},
      {"baddbmm", [](const TensorList& x, const json& a) {
         return TensorList{baddbmm(x[0], x[1], x[2], a["beta"].get<double>(), a["alpha"].get<double>())};
       }},
      {"dot", [](const TensorList& x, const json&) { return TensorList{x[0].dot(x[1])}; }},
      {"mv", [](const TensorList& x, const json&) { return TensorList{mv(x[0], x[1])}; }},
      {"outer", [](const TensorList& x, const json&) { return TensorList{outer(x[0], x[1])}; }},
      {"tensordot", [](const TensorList& x, const json& a) {
         if (a.contains("dims")) return TensorList{tensordot(x[0], x[1], a["dims"].get<int64_t>())};
         return TensorList{tensordot(x[0], x[1], ints(a["dims_a"]), ints(a["dims_b"]))};
       }},
      {"einsum", [](const TensorList& x, const json& a) {
         return TensorList{einsum(a["equation"].get<std::string>(), x)};
       }},
  };
  return table;
}

// Values agree (NaN where torch has NaN, infinities exactly); reduced floats get their precision.
void check_tensor(const Tensor& got, const Tensor& want, const std::string& what) {
  INFO(what);
  REQUIRE(got.defined());
  CHECK(got.scalar_type() == want.scalar_type());
  REQUIRE(got.sizes() == want.sizes());
  const ScalarType t = want.scalar_type();
  const double rtol = t == kBFloat16 ? 1e-2 : t == kFloat16 ? 2e-3 : t == kFloat32 ? 2e-6 : 1e-10;
  std::vector<double> g = gr::test::values(got), w = gr::test::values(want);
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element ", i, ": got ", g[i], ", torch ", w[i]);
    if (std::isnan(w[i])) CHECK(std::isnan(g[i]));
    else if (std::isinf(w[i])) CHECK(g[i] == w[i]);
    else CHECK(std::abs(g[i] - w[i]) <= rtol * (1 + std::abs(w[i])));
  }
}

}  // namespace

TEST_CASE("reductions and linear algebra match PyTorch (values, dtypes, gradients)") {
  const json ref = gr::test::load_reference("reduce_reference.json");
  int checked = 0;
  for (const json& c : ref.at("cases")) {
    const std::string name = c.at("op");
    INFO("case ", checked, ": ", name, " ", c.at("args").dump());
    REQUIRE(ops().count(name));
    TensorList inputs;
    const bool with_grads = c.contains("grads");
    for (const json& j : c.at("inputs")) inputs.push_back(decode(j));
    if (with_grads)
      for (Tensor& x : inputs) x.requires_grad_(true);
    TensorList outs = ops().at(name)(inputs, c.at("args"));
    REQUIRE(outs.size() == c.at("outputs").size());
    for (size_t i = 0; i < outs.size(); ++i) check_tensor(outs[i], decode(c.at("outputs")[i]), "output " + std::to_string(i));
    if (with_grads) {
      outs[0].backward(decode(c.at("upstream")));
      for (size_t i = 0; i < c.at("grads").size(); ++i) {
        const Tensor& g = inputs[i].grad();
        check_tensor(g.defined() ? g : zeros_like(inputs[i]), decode(c.at("grads")[i]), "gradient " + std::to_string(i));
      }
    }
    ++checked;
  }
  CHECK(checked > 200);
}
