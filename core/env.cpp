// parse_whole_number: strict decimal parsing of environment settings.
#include "core/env.h"

#include <cerrno>
#include <cstdlib>

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

}  // namespace gr
