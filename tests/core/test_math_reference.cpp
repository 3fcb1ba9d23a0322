// The math and comparison ops against PyTorch (tests/data/math_reference.json, made by
// make_math_reference.py): result dtypes, special values (NaN, +-inf, the sign of zero,
// rounding ties), integer, bool and reduced-float inputs, and the calls torch refuses.
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <sstream>

#include "reference_util.h"

using namespace gr;
using nlohmann::json;

namespace {

double number(const json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "nan") return NAN;
    return s == "inf" ? INFINITY : -INFINITY;
  }
  return v.get<double>();
}

Scalar scalar(const json& v) { return v.is_number_integer() ? Scalar(v.get<int64_t>()) : Scalar(number(v)); }
std::optional<Scalar> optional_scalar(const json& v) {
  return v.is_null() ? std::nullopt : std::optional<Scalar>(scalar(v));
}

ScalarType dtype_named(const std::string& name) {
  for (ScalarType t : {kFloat32, kFloat64, kInt64, kUInt8, kBool, kBFloat16, kFloat16})
    if (dtype_name(t) == name) return t;
  FAIL("unknown dtype ", name);
  return kFloat32;
}

std::vector<double> numbers(const json& values) {
  std::vector<double> v;
  for (const json& x : values) v.push_back(number(x));
  return v;
}

Tensor input(const json& j) {
  return tensor(numbers(j.at("values")), TensorOptions(kFloat64))
      .reshape(j.at("shape").get<std::vector<int64_t>>())
      .to(dtype_named(j.at("dtype")));
}

using Op = std::function<Tensor(const TensorList&, const json&)>;

#define GR_UNARY(name) {#name, [](const TensorList& x, const json&) { return name(x[0]); }}
#define GR_BINARY(name) {#name, [](const TensorList& x, const json&) { return name(x[0], x[1]); }}
#define GR_WITH_SCALAR(name) \
  {#name "_scalar", [](const TensorList& x, const json& p) { return name(x[0], scalar(p.at("other"))); }}

const std::map<std::string, Op>& ops() {
  static const std::map<std::string, Op> table = {
      GR_UNARY(sin), GR_UNARY(cos), GR_UNARY(tan), GR_UNARY(asin), GR_UNARY(acos), GR_UNARY(atan),
      GR_UNARY(sinh), GR_UNARY(cosh), GR_UNARY(erf), GR_UNARY(erfc), GR_UNARY(erfinv), GR_UNARY(rsqrt),
      GR_UNARY(reciprocal), GR_UNARY(log1p), GR_UNARY(expm1), GR_UNARY(log2), GR_UNARY(log10), GR_UNARY(square),
      GR_UNARY(sign), GR_UNARY(floor), GR_UNARY(ceil), GR_UNARY(round), GR_UNARY(trunc), GR_UNARY(frac),
      GR_UNARY(logical_not), GR_UNARY(bitwise_not), GR_UNARY(isnan), GR_UNARY(isinf), GR_UNARY(isfinite),
      {"erfinv_dense", [](const TensorList& x, const json&) { return erfinv(x[0]); }},
      {"softplus",
       [](const TensorList& x, const json& p) {
         return p.contains("beta") ? softplus(x[0], scalar(p["beta"]), scalar(p["threshold"])) : softplus(x[0]);
       }},
      {"round_decimals", [](const TensorList& x, const json& p) { return round(x[0], p.at("decimals").get<int64_t>()); }},
      GR_BINARY(atan2), GR_BINARY(fmod), GR_BINARY(remainder), GR_BINARY(hypot), GR_BINARY(logical_and),
      GR_BINARY(logical_or), GR_BINARY(logical_xor), GR_BINARY(eq), GR_BINARY(ne), GR_BINARY(lt), GR_BINARY(le),
      GR_BINARY(gt), GR_BINARY(ge), GR_BINARY(bitwise_and), GR_BINARY(bitwise_or), GR_BINARY(bitwise_xor),
      GR_WITH_SCALAR(fmod), GR_WITH_SCALAR(remainder), GR_WITH_SCALAR(eq), GR_WITH_SCALAR(ne), GR_WITH_SCALAR(lt),
      GR_WITH_SCALAR(le), GR_WITH_SCALAR(gt), GR_WITH_SCALAR(ge), GR_WITH_SCALAR(bitwise_and),
      GR_WITH_SCALAR(bitwise_or), GR_WITH_SCALAR(bitwise_xor),
      {"remainder_scalar_tensor", [](const TensorList& x, const json& p) { return remainder(scalar(p["other"]), x[0]); }},
      {"lerp_scalar", [](const TensorList& x, const json& p) { return lerp(x[0], x[1], scalar(p.at("weight"))); }},
      {"lerp", [](const TensorList& x, const json&) { return lerp(x[0], x[1], x[2]); }},
      {"clamp",
       [](const TensorList& x, const json& p) { return clamp(x[0], optional_scalar(p["min"]), optional_scalar(p["max"])); }},
      {"clamp_tensor", [](const TensorList& x, const json&) { return clamp(x[0], x[1], x[2]); }},
      {"clamp_min_tensor", [](const TensorList& x, const json&) { return clamp_min(x[0], x[1]); }},
      {"clamp_max_tensor", [](const TensorList& x, const json&) { return clamp_max(x[0], x[1]); }},
      {"isclose",
       [](const TensorList& x, const json& p) {
         return isclose(x[0], x[1], number(p["rtol"]), number(p["atol"]), p["equal_nan"].get<bool>());
       }},
      {"allclose",
       [](const TensorList& x, const json& p) {
         return scalar_tensor(allclose(x[0], x[1], number(p["rtol"]), number(p["atol"]), p["equal_nan"].get<bool>()),
                              kBool);
       }},
  };
  return table;
}
#undef GR_UNARY
#undef GR_BINARY
#undef GR_WITH_SCALAR

// Relative tolerance per result dtype: glibc and torch's vectorised (Sleef) math may differ in
// the last bits; reduced floats are rounded once from float32, so they agree within an ulp.
double tolerance(const std::string& op, ScalarType t) {
  if (op == "erfinv_dense") return t == kFloat64 ? 1e-12 : 1e-6;
  switch (t) {
    case kFloat64: return 4e-15;
    case kFloat32: return 1e-6;
    case kBFloat16: return 1.0 / 128;
    case kFloat16: return 1.0 / 1024;
    default: return 0;
  }
}

std::string describe(const json& c) {
  std::ostringstream s;
  s << c["op"].get<std::string>() << " on";
  for (const json& in : c["inputs"]) s << " " << in["dtype"].get<std::string>() << in["shape"];
  s << " params " << c["params"];
  return s.str();
}

// The op's name as its error messages spell it ("fmod" for "fmod_scalar").
std::string base_name(std::string op) {
  for (const char* suffix : {"_scalar_tensor", "_scalar", "_tensor", "_dense", "_decimals"})
    if (op.size() > std::string(suffix).size() && op.ends_with(suffix)) return op.substr(0, op.size() - std::string(suffix).size());
  return op;
}

void check_case(const json& c) {
  const std::string op = c["op"];
  INFO(describe(c));
  auto it = ops().find(op);
  REQUIRE_MESSAGE(it != ops().end(), "no gradring call for ", op);
  TensorList in;
  for (const json& j : c["inputs"]) in.push_back(input(j));
  if (c.contains("error")) {
    std::string message = gr::test::error_of([&] { it->second(in, c["params"]); });
    INFO("torch: ", c["error"].get<std::string>());
    CHECK_MESSAGE(!message.empty(), "gradring accepts what torch refuses");
    if (!message.empty()) CHECK_MESSAGE(message.find(base_name(op)) != std::string::npos, message);
    return;
  }
  Tensor got = it->second(in, c["params"]);
  const json& out = c["out"];
  CHECK(dtype_name(got.scalar_type()) == out["dtype"].get<std::string>());
  REQUIRE(got.sizes().vec() == out["shape"].get<std::vector<int64_t>>());
  const std::vector<double> want = numbers(out["values"]), have = gr::test::values(got);
  const double tol = tolerance(op, got.scalar_type());
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double w = want[i], h = have[i];
    bool ok = (std::isnan(w) && std::isnan(h)) || (w == h && std::signbit(w) == std::signbit(h)) ||
              (w != 0 && gr::test::is_close(h, w, tol, 0));  // an infinite w only matches itself
    if (!ok && bad++ < 3) {
      std::ostringstream args;
      for (const Tensor& t : in) args << " " << gr::test::values(t)[i % t.numel()];
      FAIL_CHECK("element ", i, " (inputs", args.str(), "): got ", h, ", torch ", w);
    }
  }
}

}  // namespace

TEST_CASE("math and comparison ops match PyTorch: values, special values, dtypes and refusals") {
  json ref = gr::test::load_reference("math_reference.json");
  REQUIRE(ref["cases"].size() > 500);
  for (const json& c : ref["cases"]) check_case(c);
}
