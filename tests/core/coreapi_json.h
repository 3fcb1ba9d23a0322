// Reading coreapi_reference.json records (tests/data/make_coreapi_reference.py) as tensors:
// {dtype, shape, values} with non-finite floats as "nan"/"inf"/"-inf", integers exact.
#pragma once

#include <cstring>
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

// Whether a and b hold the same dtype, shape and values (NaN equal to NaN, -0 to 0).
inline bool same_values(const Tensor& a, const Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) return false;
  if (a.is_floating_point()) {
    Tensor x = a.to(kFloat64).contiguous(), y = b.to(kFloat64).contiguous();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double u = x.data_ptr<double>()[i], v = y.data_ptr<double>()[i];
      if (!(u == v || (u != u && v != v))) return false;
    }
    return true;
  }
  return a.to(kInt64).equal(b.to(kInt64));
}

// The largest distance between a and b in units in the last place of their (reduced float)
// dtype: how many representable values lie between them.
inline int64_t max_ulp_distance(const Tensor& a, const Tensor& b) {
  Tensor x = a.to(kFloat32).contiguous(), y = b.to(kFloat32).contiguous();
  const int shift = a.scalar_type() == kBFloat16 ? 16 : 13;  // float32 bits below the reduced mantissa
  int64_t worst = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    auto key = [shift](float f) {  // ordered integers across zero
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      const int64_t magnitude = (bits & 0x7fffffffu) >> shift;
      return (bits >> 31) ? -magnitude : magnitude;
    };
    worst = std::max<int64_t>(worst, std::abs(key(x.data_ptr<float>()[i]) - key(y.data_ptr<float>()[i])));
  }
  return worst;
}

// coreapi_reference.json, read once.
inline const nlohmann::json& coreapi_reference() {
  static const nlohmann::json j = load_reference("coreapi_reference.json");
  return j;
}

}  // namespace gr::test
