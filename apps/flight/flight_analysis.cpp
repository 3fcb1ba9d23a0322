// gradring-flight's analysis: per group, the first sequence number where the ranks' calls
// differ and which rank is the odd one out; calls stuck; ranks without a dump; the culprit's
// call site from its recorded stack.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

#include "distributed/store/rank_list.h"
#include "flight/flight_dumps.h"

extern char** environ;

namespace gr::flight {

namespace {

using nlohmann::json;

// A frame's function: as recorded, else as `resolve` names it, else the frame itself.
std::string describe_frame(const std::string& text, const FrameResolver& resolve) {
  Frame f;
  if (!parse_frame(text, f)) return text;
  if (!f.function.empty()) return f.function;
  const std::string named = resolve(f);
  return named.empty() ? text : named;
}

// The first frame outside gradring's distributed code, the C/C++ runtime and a sanitizer's
// runtime (under ASan, backtrace() itself is an interceptor frame at the top of the stack).
std::string call_site_of(const std::vector<std::string>& stack, const FrameResolver& resolve) {
  for (const std::string& frame : stack) {
    if (frame.find("/libc.so") != std::string::npos || frame.find("/libstdc++") != std::string::npos ||
        frame.find("/libasan.so") != std::string::npos || frame.find("/libubsan.so") != std::string::npos)
      continue;
    const std::string where = describe_frame(frame, resolve);
    if (where.rfind("gr::distributed::", 0) == 0 || where.rfind("std::", 0) == 0 || where == frame ||
        where.rfind("__interceptor_", 0) == 0 || where.rfind("__sanitizer", 0) == 0)
      continue;
    return where;
  }
  return {};
}

using gr::distributed::rank_list;

// The signature the agreed history predicts for the next call: the shortest period (<= 8)
// with which the last calls repeat. Empty when no period fits.
std::vector<std::string> predict(const std::vector<std::string>& history, size_t ahead) {
  for (size_t p = 1; p <= 8 && 2 * p <= history.size(); ++p) {
    bool periodic = true;
    for (size_t i = history.size() - 2 * p; i < history.size() && periodic; ++i)
      periodic = i < p || history[i] == history[i - p];
    if (!periodic) continue;
    std::vector<std::string> next;
    for (size_t k = 0; k < ahead; ++k) next.push_back(history[history.size() - p + (k % p)]);
    return next;
  }
  return {};
}

// `culprit` gets the first finding that names ranks; `undecided` the first difference
// where nothing tells which side is wrong.
void analyze_group(const Group& g, const FrameResolver& resolve, Analysis& a, json& culprit, std::string& undecided) {
  json out = {{"name", g.name}, {"backend", g.backend}, {"members", g.members}};
  a.lines.push_back("group " + g.name + " (" + g.backend + ", " + rank_list(g.members) + "):");
  // Last completed and last issued per rank.
  std::string last = "  last completed:";
  int64_t start = 0;
  for (const auto& [r, v] : g.ranks) {
    int64_t done = -1;
    for (const auto& [s, c] : v.calls)
      if (c.state == "completed") done = s;
    out["last_completed"][std::to_string(r)] = done;
    last += " rank " + std::to_string(r) + (done >= 0 ? " #" + std::to_string(done) : " none") + ",";
    if (!v.calls.empty()) start = std::max(start, v.calls.begin()->first);  // older calls fell out of some ring
  }
  last.pop_back();
  a.lines.push_back(last);
  std::vector<int> missing;
  for (int r : g.members)
    if (!g.ranks.count(r)) missing.push_back(r);
  // The sequence numbers some rank recorded from `start` on: a number no rank holds says
  // nothing (and stepping through every number between two far apart would never end).
  std::set<int64_t> sequence;
  for (const auto& [r, v] : g.ranks)
    for (auto it = v.calls.lower_bound(start); it != v.calls.end(); ++it) sequence.insert(it->first);
  // The first sequence number where the ranks differ.
  std::vector<std::string> history;
  for (int64_t s : sequence) {
    std::map<std::string, std::vector<int>> by_call;
    std::vector<int> absent;
    for (const auto& [r, v] : g.ranks) {
      auto it = v.calls.find(s);
      if (it == v.calls.end()) absent.push_back(r);
      else by_call[it->second.signature].push_back(r);
    }
    if (by_call.size() == 1 && absent.empty()) {
      history.push_back(by_call.begin()->first);
      continue;
    }
    json diff = {{"seq", s}};
    std::string text = "  first difference: #" + std::to_string(s) + ":";
    for (const auto& [sig, ranks] : by_call) {
      diff["calls"].push_back({{"ranks", ranks}, {"call", sig}});
      text += " " + rank_list(ranks) + " called " + sig + ";";
    }
    if (!absent.empty()) {
      diff["never_issued"] = absent;
      text += " " + rank_list(absent) + " never issued it;";
    }
    text.pop_back();
    a.lines.push_back(text);
    out["first_difference"] = diff;
    if (!culprit.is_null()) break;
    // A rank without a dump died: ranks that merely never issued a later call were stuck
    // waiting for it, so they are not the culprit (the no-dump finding below is).
    if (!missing.empty() && by_call.size() == 1) break;
    // Who is odd one out: a minority; in a tie, whoever breaks the pattern of the calls before.
    std::vector<int> odd;
    std::string expected, kind;
    size_t most = 0;
    int tied = 0;
    for (const auto& [sig, ranks] : by_call) {
      if (ranks.size() > most) most = ranks.size(), expected = sig, tied = 1;
      else if (ranks.size() == most) ++tied;
    }
    const std::vector<std::string> next = predict(history, 2);
    if (tied > 1 || (by_call.size() == 1 && !absent.empty())) {
      expected = !next.empty() && by_call.count(next[0]) ? next[0] : (by_call.size() == 1 ? by_call.begin()->first : "");
    }
    if (!expected.empty()) {
      for (const auto& [sig, ranks] : by_call)
        if (sig != expected) odd.insert(odd.end(), ranks.begin(), ranks.end());
      odd.insert(odd.end(), absent.begin(), absent.end());  // behind the others: stuck before it
    }
    if (odd.empty()) {
      a.lines.push_back("    the ranks disagree and nothing tells which is right");
      if (undecided.empty())
        undecided = "the ranks disagree at collective #" + std::to_string(s) + " of group " + g.name +
                    " and nothing tells which is right";
      break;
    }
    std::sort(odd.begin(), odd.end());
    const Call* theirs = nullptr;
    for (const auto& [r, v] : g.ranks)
      if (r == odd.front() && v.calls.count(s)) theirs = &v.calls.at(s);
    if (!theirs) kind = "never issued " + expected;
    else if (next.size() > 1 && next[0] == expected && theirs->signature == next[1] && next[1] != expected)
      kind = "skipped " + expected + " (its #" + std::to_string(s) + " is the call that comes after it)";
    else
      kind = "called " + theirs->signature + " where the others called " + expected;
    culprit = {{"ranks", odd}, {"group", g.name}, {"seq", s}, {"expected", expected}, {"what", kind}};
    if (theirs) culprit["call"] = theirs->signature;
    if (const std::string site = theirs ? call_site_of(theirs->stack, resolve) : ""; !site.empty())
      culprit["call_site"] = site;
    a.lines.push_back("    " + rank_list(odd) + " " + kind);
    break;
  }
  // Stuck calls: issued but never started, and started but never finished.
  for (const auto& [r, v] : g.ranks) {
    for (const auto& [s, c] : v.calls) {
      if (c.state != "issued" && c.state != "started") continue;
      const std::string how = c.state == "issued" ? "issued, never started" : "started, never completed";
      out["stuck"].push_back({{"rank", r}, {"seq", s}, {"call", c.signature}, {"state", c.state}});
      a.lines.push_back("  rank " + std::to_string(r) + " #" + std::to_string(s) + " " + c.signature + ": " + how);
    }
  }
  if (!missing.empty()) {
    a.lines.push_back("  " + rank_list(missing) + " left no dump");
    out["no_dump"] = missing;
    if (culprit.is_null()) {
      // The call the others were in when those ranks vanished: their first one not completed.
      int64_t first_open = -1;
      std::string call;
      for (const auto& [r, v] : g.ranks)
        for (const auto& [s, c] : v.calls)
          if (c.state != "completed" && (first_open < 0 || s < first_open)) first_open = s, call = c.signature;
      culprit = {{"ranks", missing}, {"group", g.name}, {"what", "left no flight record (killed, e.g. SIGKILL, or crashed hard)"}};
      if (first_open >= 0) culprit["seq"] = first_open, culprit["call"] = call, culprit["expected"] = call;
    }
  }
  a.report["groups"].push_back(out);
}

}  // namespace

std::string addr2line_resolver(const Frame& f) {
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%" PRIx64, f.offset > 0 ? f.offset - 1 : 0);  // the call, not the return address
  // Spawned with its arguments as they are, never through a shell: the file name comes
  // from the dump.
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  const char* argv[] = {"addr2line", "-C", "-f", "-e", f.file.c_str(), hex, nullptr};
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, "addr2line", &actions, nullptr, const_cast<char**>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  std::string out;
  if (spawned == 0) {
    char buf[1024];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
      if (n > 0) out.append(buf, static_cast<size_t>(n));
      else if (errno != EINTR) break;
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  ::close(fds[0]);
  std::istringstream lines(out);
  std::string name, where;
  std::getline(lines, name);
  std::getline(lines, where);
  if (name.empty() || name == "??") return {};
  if (!where.empty() && where.rfind("??", 0) != 0) return name + " at " + where;
  char offset[32];
  std::snprintf(offset, sizeof offset, "+0x%" PRIx64 ")", f.offset);
  return name + " (" + std::filesystem::path(f.file).filename().string() + offset;
}

Analysis analyze(const Dumps& d, const FrameResolver& resolve) {
  Analysis a;
  std::vector<int> no_dump;
  for (int r = 0; r < d.world; ++r)
    if (!d.dumps.count(r)) no_dump.push_back(r);
  a.lines.push_back("gradring-flight: dumps of " + std::to_string(d.dumps.size()) + " of " + std::to_string(d.world) +
                    " ranks");
  for (const auto& [r, info] : d.dumps) {
    a.lines.push_back("  rank " + std::to_string(r) + ": " + info.reason);
    a.report["dumps"][std::to_string(r)] = info.reason;
  }
  a.report["world_size"] = d.world;
  a.report["no_dump"] = no_dump;
  json culprit;  // the first group's finding wins; the default group first
  std::string undecided;
  if (d.groups.count("default_pg")) analyze_group(d.groups.at("default_pg"), resolve, a, culprit, undecided);
  for (const auto& [name, g] : d.groups)
    if (name != "default_pg") analyze_group(g, resolve, a, culprit, undecided);
  if (!culprit.is_null()) {
    const auto odd = culprit["ranks"].get<std::vector<int>>();
    const std::string what = culprit["what"].get<std::string>();
    std::string s = rank_list(odd) + " " + what;
    if (culprit.contains("seq"))
      s += (what.find("no flight record") != std::string::npos
                ? "; the others were in #" + std::to_string(culprit["seq"].get<int64_t>()) + " " +
                      culprit["expected"].get<std::string>()
                : " at collective #" + std::to_string(culprit["seq"].get<int64_t>())) +
           " of group " + culprit["group"].get<std::string>();
    if (culprit.contains("call_site")) s += ", called at " + culprit["call_site"].get<std::string>();
    a.summary = s;
  } else if (!undecided.empty()) {
    // Not "no divergence": the ranks did diverge (the summary said so before).
    a.summary = undecided + (no_dump.empty() ? "" : "; " + rank_list(no_dump) + " left no dump");
  } else if (!no_dump.empty()) {
    a.summary = rank_list(no_dump) + " left no dump";
  } else {
    a.summary = "no divergence found: every rank issued the same collectives";
  }
  a.report["culprit"] = culprit;
  a.report["summary"] = a.summary;
  return a;
}

}  // namespace gr::flight
