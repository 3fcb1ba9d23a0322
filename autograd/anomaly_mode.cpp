// Anomaly mode's flags and the backtraces it records (glibc's backtrace + the demangler).
#include "autograd/anomaly_mode.h"

#include <cxxabi.h>
#include <execinfo.h>

#include <atomic>
#include <cstdlib>
#include <memory>

namespace gr::autograd {

namespace {
std::atomic<bool> g_enabled{false};
std::atomic<bool> g_check_nan{true};

// "binary(mangled+0x1f) [0x...]" -> "binary(demangled+0x1f) [0x...]"; unchanged otherwise.
std::string demangle_frame(const char* frame) {
  std::string s(frame);
  size_t open = s.find('('), plus = s.find('+', open == std::string::npos ? 0 : open);
  if (open == std::string::npos || plus == std::string::npos || plus == open + 1) return s;
  std::string mangled = s.substr(open + 1, plus - open - 1);
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status),
                                              std::free);
  if (status != 0 || !name) return s;
  return s.substr(0, open + 1) + name.get() + s.substr(plus);
}
}  // namespace

bool AnomalyMode::is_enabled() { return g_enabled.load(std::memory_order_relaxed); }
void AnomalyMode::set_enabled(bool enabled, bool check_nan) {
  g_enabled = enabled;
  g_check_nan = check_nan;
}
bool AnomalyMode::should_check_nan() { return g_check_nan.load(std::memory_order_relaxed); }

DetectAnomalyGuard::DetectAnomalyGuard(bool check_nan)
    : previous_enabled_(AnomalyMode::is_enabled()), previous_check_nan_(AnomalyMode::should_check_nan()) {
  AnomalyMode::set_enabled(true, check_nan);
}
DetectAnomalyGuard::~DetectAnomalyGuard() { AnomalyMode::set_enabled(previous_enabled_, previous_check_nan_); }

std::string current_backtrace(int skip) {
  constexpr int kMaxFrames = 64;
  void* frames[kMaxFrames];
  int n = ::backtrace(frames, kMaxFrames);
  std::unique_ptr<char*, void (*)(void*)> symbols(::backtrace_symbols(frames, n), std::free);
  std::string out;
  for (int i = skip + 1; i < n; ++i) {  // +1: this function's own frame
    out += "  #" + std::to_string(i - skip - 1) + " ";
    out += symbols ? demangle_frame(symbols.get()[i]) : std::string("??");
    out += '\n';
  }
  return out;
}

}  // namespace gr::autograd
