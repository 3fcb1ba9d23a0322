// Helpers shared by the test suites: tensors from values, closeness checks, scratch files.
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include <gradring/gradring.h>
#include <vector>

namespace gr::test {

// Sets (or, with nullopt, unsets) environment variable `name` in this process and restores
// its previous state at scope exit.
class EnvGuard {
 public:
  EnvGuard(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value->c_str(), 1);
    else ::unsetenv(name);
  }
  ~EnvGuard() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// `name` inside a per-process scratch folder /tmp/<folder>_<pid>/ (created on demand).
inline std::string temp_path(const std::string& folder, const std::string& name) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / (folder + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

// Flat float64 copy of any tensor's values, in logical order.
inline std::vector<double> values(const Tensor& t) {
  Tensor c = t.detach().to(kFloat64).contiguous();
  const double* p = c.data_ptr<double>();
  return {p, p + c.numel()};
}

inline std::vector<int64_t> shape(const Tensor& t) { return t.sizes().vec(); }

// A float64 tensor of the given shape holding `v`.
inline Tensor make(std::vector<double> v, std::vector<int64_t> shape_, ScalarType dtype = kFloat64) {
  return tensor(v, TensorOptions(dtype)).reshape(shape_);
}

inline void check_close(const Tensor& a, const Tensor& b, double tol = 1e-12) {
  REQUIRE(a.sizes() == b.sizes());
  std::vector<double> x = values(a), y = values(b);
  for (size_t i = 0; i < x.size(); ++i) CHECK(x[i] == doctest::Approx(y[i]).epsilon(tol).scale(1.0));
}

inline void check_values(const Tensor& a, const std::vector<double>& expected, double tol = 1e-12) {
  std::vector<double> x = values(a);
  REQUIRE(x.size() == expected.size());
  for (size_t i = 0; i < x.size(); ++i) CHECK(x[i] == doctest::Approx(expected[i]).epsilon(tol).scale(1.0));
}

// The message (without the call site) of the gr::Error that f throws ("" if it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const gr::Error& e) {
    return e.message();
  }
  return "";
}

inline TensorOptions f64_grad() { return TensorOptions(kFloat64).requires_grad(true); }

}  // namespace gr::test
