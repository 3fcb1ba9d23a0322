// Environment settings: switches (env_flag) and strict decimal numbers (parse_whole_number).
#include "core/env.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/error.h"

namespace gr {

int64_t parse_whole_number(const char* name, const char* value, int64_t min, int64_t max, const char* unit) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(value, &end, 10);
  GR_CHECK(errno == 0 && end != value && *end == '\0' && v >= min && v <= max, name, "='", value,
           "' is not a whole number of ", unit, " from ", min, " to ", max);
  return v;
}

bool env_flag(const char* name, bool fallback) {
  const char* v = std::getenv(name);
  return v == nullptr || *v == '\0' ? fallback : std::strcmp(v, "0") != 0;
}

}  // namespace gr
