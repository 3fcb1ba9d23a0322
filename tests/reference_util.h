// Loading PyTorch reference data (tests/data/*.json): tensors stored as {shape, values}.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "test_util.h"

namespace gr::test {

// Parses tests/data/<file>; fails the test with the script to run if it is missing.
inline nlohmann::json load_reference(const std::string& file) {
  std::string path = std::string(GRADRING_TEST_DATA) + "/" + file;
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

}  // namespace gr::test
