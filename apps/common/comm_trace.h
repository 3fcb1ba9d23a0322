// How much of a DDP step's communication hid under backward, from the profiler's trace (bench_ddp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include <gradring/gradring.h>

namespace gr::apps {

// Timestamps of one step (profiler clock, ns), and the CPU time the process used in it.
struct StepTimes {
  int64_t start, backward_start, backward_end, end;
  int64_t cpu_ns;
};

// Per step, averaged over the steps.
struct CommFigures {
  double comm_ms = 0;    // time with at least one bucket all-reduce in flight
  double hidden_ms = 0;  // ... of which while backward computed gradients (see analyse_comm_trace)
  double hidden_until_wait_ms = 0;  // ... of which between backward's start and the DDP wait
  double wait_ms = 0;    // the "DDP wait" span at the end of backward
};

inline double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

// Length of the union of [begin, end) intervals, clipped to [lo, hi).
inline int64_t covered(std::vector<std::pair<int64_t, int64_t>> spans, int64_t lo, int64_t hi) {
  for (auto& s : spans) s = {std::max(s.first, lo), std::min(s.second, hi)};
  std::sort(spans.begin(), spans.end());
  int64_t total = 0, reach = lo;
  for (auto [b, e] : spans) {
    b = std::max(b, reach);
    if (e > b) {
      total += e - b;
      reach = e;
    }
  }
  return total;
}

// Backward computes gradients until the last bucket is launched (its last gradient just became
// ready); after that only the launching hook and the DDP wait remain, so "hidden" counts
// communication in flight between backward's start and that launch (or the DDP wait, if earlier).
// A fully_shard step communicates in forward too: its "hidden" is the communication time not
// spent blocked in its waits ("FSDP wait all-gather ...", "FSDP end of backward"), which
// count as its wait.
inline CommFigures analyse_comm_trace(const std::vector<profiler::Event>& events, const std::vector<StepTimes>& steps) {
  int64_t comm = 0, hidden = 0, hidden_until_wait = 0, wait = 0;
  for (const StepTimes& s : steps) {
    std::vector<std::pair<int64_t, int64_t>> spans, fsdp_waits;
    int64_t wait_start = s.backward_end, last_launch = s.backward_start;
    for (const profiler::Event& e : events) {
      const int64_t b = e.start_ns, end = e.start_ns + e.duration_ns;
      if (b < s.start || b >= s.end) continue;
      if (e.category && std::strcmp(e.category, "comm") == 0) {
        spans.emplace_back(b, end);
        last_launch = std::max(last_launch, b);
      }
      if (e.name == "DDP wait" && b >= s.backward_start && b < wait_start) {
        wait_start = b;
        wait += e.duration_ns;
      }
      if (e.name.rfind("FSDP wait", 0) == 0 || e.name == "FSDP end of backward") fsdp_waits.emplace_back(b, end);
    }
    const int64_t step_comm = covered(spans, s.start, s.end);
    comm += step_comm;
    if (!fsdp_waits.empty()) {
      const int64_t waited = covered(fsdp_waits, s.start, s.end);
      wait += waited;
      hidden += std::max<int64_t>(0, step_comm - waited);
      hidden_until_wait += std::max<int64_t>(0, step_comm - waited);
      continue;
    }
    hidden += covered(spans, s.backward_start, std::min(wait_start, last_launch));
    hidden_until_wait += covered(spans, s.backward_start, wait_start);
  }
  const double n = static_cast<double>(steps.size());
  return {ms(comm) / n, ms(hidden) / n, ms(hidden_until_wait) / n, ms(wait) / n};
}

}  // namespace gr::apps
