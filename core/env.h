// Reading numeric settings from environment variables, with errors that name the variable.
#pragma once

#include <cstdint>

namespace gr {

// `value` (the text of environment variable `name`) as a whole number in [min, max];
// otherwise throws "NAME='value' is not a whole number of UNIT from MIN to MAX".
int64_t parse_whole_number(const char* name, const char* value, int64_t min, int64_t max, const char* unit);

}  // namespace gr
