// CLI11 helpers shared by the apps: validators whose messages say what is expected
// (CLI11's own numeric checks print the whole range of the type).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace gr::apps {

inline CLI::Validator positive() {
  return CLI::Validator(
      [](std::string& v) {
        double x = 0;
        return CLI::detail::lexical_cast(v, x) && x > 0 ? std::string() : "must be a positive number, got " + v;
      },
      "POSITIVE");
}

inline CLI::Validator non_negative() {
  return CLI::Validator(
      [](std::string& v) {
        double x = -1;
        return CLI::detail::lexical_cast(v, x) && x >= 0 ? std::string() : "must be zero or more, got " + v;
      },
      ">=0");
}

}  // namespace gr::apps
