// Helpers every Store implementation shares: timeout messages that say who waited how long
// for which keys, the decimal integer values add() keeps, and the size limits of keys and
// values.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "distributed/store/store.h"

namespace gr::distributed {

// Largest key or value a store accepts (checked before anything is allocated).
constexpr uint64_t kMaxStoreValueBytes = uint64_t(1) << 30;  // 1 GiB
// Most keys one check()/wait() may name.
constexpr uint64_t kMaxStoreKeys = uint64_t(1) << 20;

// "250 ms", "30 s", "1.5 s".
std::string format_duration(std::chrono::milliseconds d);
// "key 'a'" or "keys 'a', 'b', 'c'" (at most a few, long keys shortened).
std::string describe_keys(const std::vector<std::string>& keys);
// "rank 1 waited 30 s for key 'x'" plus ", still missing 'b'" when only some keys of a
// wait() were missing.
std::string wait_timeout_message(const std::string& label, std::chrono::milliseconds waited,
                                 const std::vector<std::string>& keys, const std::vector<std::string>& missing);
// add(): the integer a value holds (missing = empty = 0); throws naming `key` when the
// value is not a decimal integer. Returns the new value, checking for overflow.
int64_t add_to_value(const std::string& key, const Bytes& current, int64_t delta);
Bytes int_to_bytes(int64_t v);

}  // namespace gr::distributed
