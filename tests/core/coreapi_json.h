// Reading coreapi_reference.json records (tests/data/make_coreapi_reference.py) as tensors:
// {dtype, shape, values} with non-finite floats as "nan"/"inf"/"-inf", integers exact.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "reference_util.h"

namespace gr::test {

inline ScalarType dtype_from_name(const std::string& name) {
  for (int i = 0; i < kNumScalarTypes; ++i)
    if (dtype_name(static_cast<ScalarType>(i)) == name) return static_cast<ScalarType>(i);
  FAIL("unknown dtype ", name);
  return kFloat32;
}

// A JSON number, or "nan"/"inf"/"-inf", as a double.
inline double json_double(const nlohmann::json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    return s == "inf" ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  }
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  return v.get<double>();
}

// The record's values in its dtype (made exactly: through float64 or int64).
inline Tensor json_tensor(const nlohmann::json& j) {
  const ScalarType dtype = dtype_from_name(j.at("dtype").get<std::string>());
  const std::vector<int64_t> shape = j.at("shape").get<std::vector<int64_t>>();
  const nlohmann::json& values = j.at("values");
  Tensor flat;
  if (is_floating_point(dtype)) {
    std::vector<double> v;
    for (const auto& x : values) v.push_back(json_double(x));
    flat = tensor(v, kFloat64);
  } else if (dtype == kBool) {
    std::vector<bool> v;
    for (const auto& x : values) v.push_back(x.get<bool>());
    flat = tensor(v);
  } else {
    std::vector<int64_t> v;
    for (const auto& x : values) v.push_back(x.get<int64_t>());
    flat = tensor(v, kInt64);
  }
  return flat.to(dtype).reshape(shape);
}

// coreapi_reference.json, read once.
inline const nlohmann::json& coreapi_reference() {
  static const nlohmann::json j = load_reference("coreapi_reference.json");
  return j;
}

}  // namespace gr::test
