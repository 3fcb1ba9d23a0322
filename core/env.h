// Reading settings from environment variables: switches, and numbers with errors that name the variable.
#pragma once

#include <cstdint>

namespace gr {

// `value` (the text of environment variable `name`) as a whole number in [min, max];
// otherwise throws "NAME='value' is not a whole number of UNIT from MIN to MAX".
int64_t parse_whole_number(const char* name, const char* value, int64_t min, int64_t max, const char* unit);

// Environment variable `name` as a switch: unset or empty gives `fallback`, "0" false,
// anything else true (GRADRING_CUBLASLT=0, GRADRING_CUDNN_ATTENTION=0, ...).
bool env_flag(const char* name, bool fallback);

}  // namespace gr
