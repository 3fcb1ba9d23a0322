// Loading PyTorch reference data (tests/data/*.json): tensors stored as {shape, values}.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "test_util.h"

namespace gr::test {

// Parses tests/data/<file>; fails the test with the script to run if it is missing.
inline nlohmann::json load_reference(const std::string& file) {
  std::string path = GRADRING_TEST_DATA;  // appended, not operator+: GCC 12 at -O1 warns
  path += '/';                          // (a false -Wstringop-overflow) on the temporaries
  path += file;
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "missing reference data ", path, " (regenerate it with the make_*.py script beside it)");
  return nlohmann::json::parse(in);
}

// A {shape, values} record as a tensor of `dtype`.
inline Tensor tensor_from_json(const nlohmann::json& j, ScalarType dtype = kFloat64) {
  std::vector<double> values = j.at("values").get<std::vector<double>>();
  std::vector<int64_t> shape = j.at("shape").get<std::vector<int64_t>>();
  return tensor(values, TensorOptions(dtype)).reshape(shape);
}

// Copies a PyTorch state_dict recorded as {name: {shape, values}} into m's parameters by name;
// the recorded names must be exactly m's parameter names, and the shapes must match.
inline void load_parameters(nn::Module& m, const nlohmann::json& state) {
  std::set<std::string> ours, theirs;
  for (const auto& item : m.named_parameters()) ours.insert(item.first);
  for (const auto& [name, value] : state.items()) theirs.insert(name);
  REQUIRE(ours == theirs);
  NoGradGuard no_grad;
  for (auto& item : m.named_parameters()) {
    Tensor src = tensor_from_json(state.at(item.first));
    REQUIRE(item.second.sizes() == src.sizes());
    item.second.copy_(src);
  }
}

}  // namespace gr::test
