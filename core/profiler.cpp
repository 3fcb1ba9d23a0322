// Profiler event recording (a global list under a mutex: spans are coarse, microseconds
// and up), summaries and Chrome trace output.
#include "core/profiler.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/error.h"

namespace gr::profiler {

namespace detail {
std::atomic<bool> g_enabled{false};
}

namespace {

std::mutex g_mutex;
std::vector<Event> g_events;
const auto g_epoch = std::chrono::steady_clock::now();
std::atomic<uint32_t> g_next_thread{0};
thread_local uint32_t t_thread = g_next_thread.fetch_add(1);
thread_local uint32_t t_depth = 0;

int64_t clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - g_epoch).count();
}

}  // namespace

int64_t now_ns() { return clock_ns(); }

void record(std::string name, const char* category, int64_t start_ns, int64_t end_ns, const char* track) {
  if (!enabled()) return;
  std::lock_guard lock(g_mutex);
  g_events.push_back({std::move(name), category, start_ns, end_ns - start_ns, t_thread, 0, track});
}

void enable(bool on) { detail::g_enabled.store(on); }

void reset() {
  std::lock_guard lock(g_mutex);
  g_events.clear();
}

std::vector<Event> events() {
  std::lock_guard lock(g_mutex);
  return g_events;
}

ScopedEvent::ScopedEvent(const char* name, const char* category) {
  if (!enabled()) return;
  name_ = name;
  category_ = category;
  ++t_depth;
  start_ = clock_ns();
}

ScopedEvent::ScopedEvent(std::string name, const char* category) {
  if (!enabled()) return;
  name_ = std::move(name);
  category_ = category;
  ++t_depth;
  start_ = clock_ns();
}

ScopedEvent::~ScopedEvent() {
  if (start_ < 0) return;
  int64_t end = clock_ns();
  --t_depth;
  std::lock_guard lock(g_mutex);
  g_events.push_back({std::move(name_), category_, start_, end - start_, t_thread, t_depth});
}

std::vector<OpStats> summary() {
  std::vector<Event> ev = events();
  // Self time: subtract each event's duration from its innermost enclosing event on the
  // same thread (events are sorted by start, so a stack of open events finds it).
  std::sort(ev.begin(), ev.end(), [](const Event& a, const Event& b) {
    return a.thread != b.thread ? a.thread < b.thread : (a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.depth < b.depth);
  });
  std::vector<int64_t> self(ev.size());
  std::vector<size_t> open;
  for (size_t i = 0; i < ev.size(); ++i) {
    self[i] = ev[i].duration_ns;
    while (!open.empty() && (ev[open.back()].thread != ev[i].thread ||
                             ev[open.back()].start_ns + ev[open.back()].duration_ns <= ev[i].start_ns))
      open.pop_back();
    if (!open.empty()) self[open.back()] -= ev[i].duration_ns;
    open.push_back(i);
  }
  std::map<std::pair<std::string, std::string>, OpStats> by_name;
  for (size_t i = 0; i < ev.size(); ++i) {
    OpStats& s = by_name[{ev[i].category, ev[i].name}];
    s.name = ev[i].name;
    s.category = ev[i].category;
    ++s.calls;
    s.total_ms += ev[i].duration_ns * 1e-6;
    s.self_ms += self[i] * 1e-6;
  }
  std::vector<OpStats> out;
  for (auto& [k, s] : by_name) out.push_back(s);
  std::sort(out.begin(), out.end(), [](const OpStats& a, const OpStats& b) { return a.self_ms > b.self_ms; });
  return out;
}

std::string table(size_t max_rows) {
  std::vector<OpStats> s = summary();
  double total_self = 0;
  for (const OpStats& o : s) total_self += o.self_ms;
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof line, "%-36s %-9s %7s %11s %11s %7s\n", "name", "category", "calls", "total ms", "self ms",
                "self %");
  out << line;
  for (size_t i = 0; i < s.size() && i < max_rows; ++i) {
    std::snprintf(line, sizeof line, "%-36.36s %-9s %7lld %11.3f %11.3f %6.1f%%\n", s[i].name.c_str(),
                  s[i].category.c_str(), static_cast<long long>(s[i].calls), s[i].total_ms, s[i].self_ms,
                  total_self > 0 ? 100.0 * s[i].self_ms / total_self : 0.0);
    out << line;
  }
  if (s.size() > max_rows) out << "(" << s.size() - max_rows << " more rows)\n";
  return out.str();
}

void write_chrome_trace(const std::string& path, int process_id, const std::string& process_name) {
  std::vector<Event> ev = events();
  std::ofstream out(path);
  GR_CHECK(out.good(), "profiler: cannot write trace file '", path, "'");
  const int pid = process_id >= 0 ? process_id : static_cast<int>(::getpid());
  auto clean = [](const std::string& s) {
    std::string r;
    for (char c : s) r += (c == '"' || c == '\\') ? '_' : c;
    return r;
  };
  // Named tracks (e.g. "comm") get thread ids after the real threads'.
  std::map<std::string, unsigned> tracks;
  for (const Event& e : ev)
    if (e.track && !tracks.count(e.track)) tracks.emplace(e.track, 1000 + static_cast<unsigned>(tracks.size()));
  out << "{\"traceEvents\":[\n";
  out << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" << pid << ",\"args\":{\"name\":\""
      << clean(process_name.empty() ? "gradring" : process_name) << "\"}}";
  for (const auto& [name, tid] : tracks)
    out << ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" << pid << ",\"tid\":" << tid
        << ",\"args\":{\"name\":\"" << clean(name) << "\"}}";
  // Timestamps on the machine's monotonic clock (not this process's epoch), so the traces of
  // several processes (ranks) line up when opened together.
  const double epoch_us =
      std::chrono::duration<double, std::micro>(g_epoch.time_since_epoch()).count();
  for (const Event& e : ev) {
    unsigned tid = e.track ? tracks[e.track] : e.thread;
    char buf[160];
    std::snprintf(buf, sizeof buf, "\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%d,\"tid\":%u}",
                  e.category, epoch_us + e.start_ns * 1e-3, e.duration_ns * 1e-3, pid, tid);
    out << ",\n{\"name\":\"" << clean(e.name) << buf;
  }
  out << "\n],\"displayTimeUnit\":\"ms\"}\n";
  GR_CHECK(out.good(), "profiler: writing trace file '", path, "' failed");
}

}  // namespace gr::profiler
