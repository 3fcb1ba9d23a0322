// Helpers shared by the test suites: tensors from values, closeness checks (NaN-safe, see
// compare.h), scratch files.
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

#include "compare.h"

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

inline std::vector<int64_t> shape(const Tensor& t) { return t.sizes().vec(); }

// A float64 tensor of the given shape holding `v`.
inline Tensor make(std::vector<double> v, std::vector<int64_t> shape_, ScalarType dtype = kFloat64) {
  return tensor(v, TensorOptions(dtype)).reshape(shape_);
}

// a and b have the same shape and every pair of values is near() at `tol` (relative, with
// an absolute floor of tol): NaN, an infinity against anything but itself, or a shape
// mismatch fails. One CHECK names the first differing index.
inline void check_close(const Tensor& a, const Tensor& b, double tol = 1e-12) {
  const std::string bad = close_mismatch(a, b, tol);
  CHECK_MESSAGE(bad.empty(), bad, " (tolerance ", tol, ")");
}

// check_close against a flat list of expected values (the count must match).
inline void check_values(const Tensor& a, const std::vector<double>& expected, double tol = 1e-12) {
  const std::string bad = first_mismatch(values(a), expected, [tol](double x, double y) { return near(x, y, tol); });
  CHECK_MESSAGE(bad.empty(), bad, " (tolerance ", tol, ")");
}

// a and b have the same shape and every got value is is_close() to its reference: within
// atol + rtol * |ref| (torch.allclose's rule, without broadcasting or equal_nan).
inline void check_allclose(const Tensor& got, const Tensor& ref, double rtol, double atol) {
  const std::string bad = allclose_mismatch(got, ref, rtol, atol);
  CHECK_MESSAGE(bad.empty(), bad, " (rtol ", rtol, ", atol ", atol, ")");
}

// Note [Skips]
// A test case that cannot run on some machines says so in its declaration,
//   TEST_CASE("name" * gr::test::skip_unless(condition, "why, and how to make it run")),
// evaluated once at start-up: doctest then skips it (counted in its summary), and the listener
// in tests/main.cpp prints "[doctest] SKIPPED: name: why". scripts/check_skips lists those lines
// and the ctest tests that exited 77 after a run, and fails when one that must run on a CPU
// machine skipped. A test must never print a message and return instead: that passes.
struct skip_unless {
  bool run;
  const char* why;  // a string literal (kept by doctest)
  void fill(doctest::detail::TestCase& t) const {
    t.m_skip = !run;
    if (!run) t.m_description = why;
  }
};

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

// Fails (a gr::Error, so it also works inside a spawned rank) unless f throws a gr::Error whose
// message contains `part`; `what` names the check.
template <class F>
void require_error(F&& f, const std::string& part, const std::string& what) {
  const std::string got = error_of(std::forward<F>(f));
  if (!got.empty() && got.find(part) != std::string::npos) return;
  GR_ERROR(what, ": expected an error containing \"", part, "\", got: ", got.empty() ? "no error" : got);
}

inline TensorOptions f64_grad() { return TensorOptions(kFloat64).requires_grad(true); }

}  // namespace gr::test
