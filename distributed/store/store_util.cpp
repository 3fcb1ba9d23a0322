// Shared store helpers: timeout messages, add()'s decimal values.
#include "distributed/store/store_util.h"

#include <charconv>
#include <cstdio>

#include "core/error.h"

namespace gr::distributed {

std::string format_duration(std::chrono::milliseconds d) {
  int64_t ms = d.count();
  if (ms < 1000) return std::to_string(ms) + " ms";
  char buf[32];
  double s = static_cast<double>(ms) / 1000.0;
  if (ms % 1000 < 50 || ms % 1000 >= 950) {
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  }
  return buf;
}

static std::string quote(const std::string& key) {
  constexpr size_t kShown = 80;
  std::string out(1, '\'');
  if (key.size() <= kShown) return out.append(key).append(1, '\'');
  return out.append(key, 0, kShown).append("...' (").append(std::to_string(key.size())).append(" bytes)");
}

static std::string list_keys(const std::vector<std::string>& keys) {
  constexpr size_t kShown = 8;
  std::string out;
  for (size_t i = 0; i < keys.size() && i < kShown; ++i) out += (i ? ", " : "") + quote(keys[i]);
  if (keys.size() > kShown) out += ", ... (" + std::to_string(keys.size()) + " keys in all)";
  return out;
}

std::string describe_keys(const std::vector<std::string>& keys) {
  return (keys.size() == 1 ? "key " : "keys ") + list_keys(keys);
}

std::string wait_timeout_message(const std::string& label, std::chrono::milliseconds waited,
                                 const std::vector<std::string>& keys, const std::vector<std::string>& missing) {
  std::string msg = label + " waited " + format_duration(waited) + " for " + describe_keys(keys);
  if (!missing.empty() && missing.size() < keys.size()) msg += ", still missing " + list_keys(missing);
  return msg + " (a peer may have died, or not reached this point yet)";
}

int64_t add_to_value(const std::string& key, const Bytes& current, int64_t delta) {
  int64_t value = 0;
  if (!current.empty()) {
    const char* first = reinterpret_cast<const char*>(current.data());
    const char* last = first + current.size();
    auto [end, ec] = std::from_chars(first, last, value);
    GR_CHECK(ec == std::errc() && end == last, "Store.add: key ", quote(key), " holds '",
             std::string(first, std::min<size_t>(current.size(), 40)), "', not a decimal integer");
  }
  int64_t result = 0;
  GR_CHECK(!__builtin_add_overflow(value, delta, &result), "Store.add: ", value, " + ", delta, " at key ", quote(key),
           " overflows int64");
  return result;
}

Bytes int_to_bytes(int64_t v) {
  std::string s = std::to_string(v);
  return Bytes(s.begin(), s.end());
}

}  // namespace gr::distributed
