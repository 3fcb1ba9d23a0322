// gr::Error construction: keeps the bare message and appends the call site to what().
#include "core/error.h"

#include <cstring>

namespace gr {

static std::string with_site(const std::string& message, const char* file, int line) {
  // Show the path from the project folder on, not the build machine's absolute path.
  const char* shown = file;
  for (const char* dir : {"/core/", "/autograd/", "/nn/", "/data/", "/distributed/", "/cuda_kernels/", "/apps/"}) {
    if (const char* p = std::strstr(file, dir)) {
      shown = p + 1;
      break;
    }
  }
  return message + " (" + shown + ":" + std::to_string(line) + ")";
}

Error::Error(const std::string& message, const char* file, int line)
    : std::runtime_error(with_site(message, file, line)), message_(message) {}

namespace detail {
void throw_error(const char* file, int line, const std::string& message) { throw Error(message, file, line); }
}  // namespace detail

}  // namespace gr
