// The deterministic-algorithms switch (Note [Deterministic algorithms] in deterministic.h).
#include "core/deterministic.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>

#include "core/error.h"

namespace gr {

namespace {
std::atomic<bool> g_deterministic{false}, g_warn_only{false};
}  // namespace

void use_deterministic_algorithms(bool mode, bool warn_only) {
  g_warn_only.store(warn_only);
  g_deterministic.store(mode);
}

bool are_deterministic_algorithms_enabled() { return g_deterministic.load(std::memory_order_relaxed); }
bool is_deterministic_algorithms_warn_only_enabled() { return g_warn_only.load(std::memory_order_relaxed); }

void alert_not_deterministic(const char* op) {
  if (!are_deterministic_algorithms_enabled()) return;
  if (is_deterministic_algorithms_warn_only_enabled()) {
    static std::mutex mutex;
    static std::set<std::string> warned;
    std::lock_guard<std::mutex> lock(mutex);
    if (warned.insert(op).second)
      std::fprintf(stderr, "gradring: warning: %s does not have a deterministic implementation, but you set "
                           "gr::use_deterministic_algorithms(true, /*warn_only=*/true)\n", op);
    return;
  }
  GR_ERROR(op, " does not have a deterministic implementation, but you set gr::use_deterministic_algorithms(true). "
               "You can turn determinism off just for this operation, or use warn_only = true if that is acceptable "
               "for your application");
}

}  // namespace gr
