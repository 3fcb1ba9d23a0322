// gr::Error and GR_CHECK: every failed argument check throws with the call site and the values.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace gr {

// The one exception type of the library. what() reads "message (file:line)".
class Error : public std::runtime_error {
 public:
  Error(const std::string& message, const char* file, int line);
  const std::string& message() const { return message_; }

 private:
  std::string message_;
};

namespace detail {
template <class... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream out;
  ((out << args), ...);
  return out.str();
}
[[noreturn]] void throw_error(const char* file, int line, const std::string& message);
}  // namespace detail

}  // namespace gr

// GR_CHECK(cond, "op: message ", value, ...) throws gr::Error when cond is false.
#define GR_CHECK(cond, ...)                                                              \
  do {                                                                                   \
    if (!(cond)) [[unlikely]] {                                                          \
      ::gr::detail::throw_error(__FILE__, __LINE__, ::gr::detail::str_cat(__VA_ARGS__)); \
    }                                                                                    \
  } while (0)

// GR_ERROR("message ", value, ...) throws unconditionally.
#define GR_ERROR(...) ::gr::detail::throw_error(__FILE__, __LINE__, ::gr::detail::str_cat(__VA_ARGS__))
