// A small built-in profiler: timed, named spans from kernel dispatch, the backward engine
// and nn::Sequential (plus any ScopedEvent), summarised as a table or written as a Chrome
// trace (chrome://tracing, Perfetto). Off by default; when off a span costs one load.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace gr::profiler {

namespace detail {
extern std::atomic<bool> g_enabled;
}

inline bool enabled() { return detail::g_enabled.load(std::memory_order_relaxed); }
void enable(bool on = true);
// Forgets every recorded event.
void reset();

struct Event {
  std::string name;
  const char* category;  // "kernel", "backward", "module", "user"
  int64_t start_ns;      // since the profiler's epoch
  int64_t duration_ns;
  uint32_t thread;
  uint32_t depth;        // nesting level on its thread
  const char* track = nullptr;  // a named row instead of the thread's (record())
};
std::vector<Event> events();

// Records a span from construction to destruction when the profiler is enabled.
// `name` must outlive the profiler run (string literals, or names copied via the
// std::string overload).
class ScopedEvent {
 public:
  ScopedEvent(const char* name, const char* category = "user");
  ScopedEvent(std::string name, const char* category = "user");
  ~ScopedEvent();
  ScopedEvent(const ScopedEvent&) = delete;
  ScopedEvent& operator=(const ScopedEvent&) = delete;

 private:
  std::string name_;
  const char* category_ = nullptr;
  int64_t start_ = -1;
};

// Nanoseconds since the profiler's epoch (the clock of every event).
int64_t now_ns();
// Records a finished span measured by the caller (e.g. started on one thread and ended on
// another, like a collective); `track` names the row it shows on in a trace ("comm").
void record(std::string name, const char* category, int64_t start_ns, int64_t end_ns, const char* track = nullptr);

struct OpStats {
  std::string name;
  std::string category;
  int64_t calls = 0;
  double total_ms = 0;  // including nested spans
  double self_ms = 0;   // excluding nested spans
};
// Per (category, name) totals, sorted by self time, largest first.
std::vector<OpStats> summary();
// The summary as an aligned text table with percentages of the total self time.
std::string table(size_t max_rows = 40);
// Writes every event as Chrome trace JSON ("X" events, microseconds). `process_id` and
// `process_name` label the process (e.g. the rank) so traces of several ranks line up.
void write_chrome_trace(const std::string& path, int process_id = -1, const std::string& process_name = "");

}  // namespace gr::profiler
