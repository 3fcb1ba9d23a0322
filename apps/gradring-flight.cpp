// gradring-flight: reads every rank's flight recorder dump (GRADRING_FLIGHT_RECORDER_DIR,
// distributed/backends/flight_recorder.h) and says which rank diverged and in which call.
//   gradring-flight [--json] DIR|FILE...
// Per group: the last collective each rank completed, the first call where the ranks differ
// (another op, dtype, shape or root, or a call some ranks never issued), calls issued but
// never started, ranks that left no dump; then one summary line. See docs/reliability.md.
#include <CLI/CLI.hpp>
#include <gradring/distributed/store/rank_list.h>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using nlohmann::json;

struct Call {
  int64_t seq = -1;
  std::string signature;  // "allreduce (sum) float32 [1000]": what every rank must agree on
  std::string state;      // issued, started, completed, failed
  json stack;             // GRADRING_FLIGHT_RECORDER_STACKS=1: the frames, innermost first
};

struct RankView {  // one rank's record of one group
  int rank = 0;
  std::map<int64_t, Call> calls;  // collectives by sequence number
};

struct Dump {
  int rank = 0;
  int world_size = 0;
  std::string reason;
};

struct Group {
  std::string name, backend;
  std::vector<int> members;  // ranks in the default group
  std::map<int, RankView> ranks;
};

std::string shape_text(const json& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i].get<int64_t>());
  return s + "]";
}

std::string signature_of(const json& e) {
  std::string s = e.value("op", "?");
  if (e.contains("reduce_op")) s += " (" + e["reduce_op"].get<std::string>() + ")";
  if (e.contains("dtype")) s += " " + e["dtype"].get<std::string>() + " " + shape_text(e["shape"]);
  if (e.contains("root")) s += " root " + std::to_string(e["root"].get<int>());
  if (e.value("tensors", 1) > 1) s += " x" + std::to_string(e["tensors"].get<int>());
  return s;
}

// A frame "FILE(FUNCTION+0xOFFSET)" as the recorder writes it; FUNCTION may be empty (not in
// the dynamic symbol table): then addr2line, when installed, names it (and its line, with
// debug information).
std::string resolve_frame(const std::string& frame) {
  // The first '(' ends FILE: FUNCTION may hold parentheses of its own (a demangled name).
  const size_t open = frame.find('('), plus = frame.rfind("+0x");
  if (open == std::string::npos || plus == std::string::npos || plus < open) return frame;
  const std::string file = frame.substr(0, open), function = frame.substr(open + 1, plus - open - 1);
  if (!function.empty()) return function;
  const size_t offset = std::stoull(frame.substr(plus + 3), nullptr, 16);
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%zx", offset > 0 ? offset - 1 : 0);  // the call, not the return address
  const std::string command = "addr2line -C -f -e '" + file + "' " + hex + " 2>/dev/null";
  std::string out;
  if (FILE* p = popen(command.c_str(), "r")) {
    char buf[1024];
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  std::istringstream lines(out);
  std::string name, where;
  std::getline(lines, name);
  std::getline(lines, where);
  if (name.empty() || name == "??") return frame;
  if (!where.empty() && where.rfind("??", 0) != 0) return name + " at " + where;
  return name + " (" + std::filesystem::path(file).filename().string() + "+0x" + frame.substr(plus + 3);
}

// The first frame outside gradring's distributed code and the C/C++ runtime.
std::string call_site_of(const json& stack) {
  if (!stack.is_array()) return {};
  for (const json& f : stack) {
    const std::string frame = f.get<std::string>();
    if (frame.find("/libc.so") != std::string::npos || frame.find("/libstdc++") != std::string::npos) continue;
    const std::string where = resolve_frame(frame);
    if (where.rfind("gr::distributed::", 0) == 0 || where.rfind("std::", 0) == 0 || where == frame) continue;
    return where;
  }
  return {};
}

using gr::distributed::rank_list;

// Reads DIR/rank*.json or the files given.
std::vector<std::filesystem::path> dump_files(const std::vector<std::string>& args) {
  std::vector<std::filesystem::path> files;
  for (const std::string& a : args) {
    if (!std::filesystem::is_directory(a)) {
      files.emplace_back(a);
      continue;
    }
    for (const auto& entry : std::filesystem::directory_iterator(a)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("rank", 0) == 0 && entry.path().extension() == ".json") files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

struct Analysis {
  json report = json::object();
  std::vector<std::string> lines;  // the human-readable report
  std::string summary;
};

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

void analyze_group(const Group& g, const std::set<int>& no_dump, Analysis& a, json& culprit) {
  json out = {{"name", g.name}, {"backend", g.backend}, {"members", g.members}};
  a.lines.push_back("group " + g.name + " (" + g.backend + ", " + rank_list(g.members) + "):");
  // Last completed and last issued per rank.
  std::string last = "  last completed:";
  int64_t start = 0, end = -1;
  for (const auto& [r, v] : g.ranks) {
    int64_t done = -1;
    for (const auto& [s, c] : v.calls)
      if (c.state == "completed") done = s;
    out["last_completed"][std::to_string(r)] = done;
    last += " rank " + std::to_string(r) + (done >= 0 ? " #" + std::to_string(done) : " none") + ",";
    if (!v.calls.empty()) {
      start = std::max(start, v.calls.begin()->first);  // older calls fell out of some ring
      end = std::max(end, v.calls.rbegin()->first);
    }
  }
  last.pop_back();
  a.lines.push_back(last);
  std::vector<int> missing;
  for (int r : g.members)
    if (!g.ranks.count(r)) missing.push_back(r);
  // The first sequence number where the ranks differ.
  std::vector<std::string> history;
  for (int64_t s = start; s <= end; ++s) {
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
    if (const std::string site = theirs ? call_site_of(theirs->stack) : ""; !site.empty()) culprit["call_site"] = site;
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
  (void)no_dump;
  a.report["groups"].push_back(out);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> inputs;
  bool as_json = false;
  CLI::App app{"Read every rank's flight recorder dump and name the rank that diverged.\n"
               "usage: gradring-flight [--json] DIR|FILE..."};
  app.add_option("dumps", inputs, "the folder of the dumps (GRADRING_FLIGHT_RECORDER_DIR) or rank*.json files")
      ->required();
  app.add_flag("--json", as_json, "one JSON object instead of text");
  CLI11_PARSE(app, argc, argv);

  std::map<int, Dump> dumps;
  std::map<std::string, Group> groups;
  int world = 0;
  try {
    const auto files = dump_files(inputs);
    if (files.empty()) throw std::runtime_error("no rank*.json dumps in " + inputs.front());
    for (const auto& path : files) {
      std::ifstream in(path);
      if (!in) throw std::runtime_error("cannot read " + path.string());
      json d;
      try {
        d = json::parse(in);
      } catch (const json::exception& e) {
        throw std::runtime_error(path.string() + " is not a flight recorder dump: " + e.what());
      }
      if (d.value("format", "") != "gradring-flight-recorder")
        throw std::runtime_error(path.string() + " is not a flight recorder dump (no \"format\")");
      Dump info{d.value("rank", 0), d.value("world_size", 0), d.value("reason", "")};
      dumps[info.rank] = info;
      world = std::max(world, info.world_size);
      std::set<std::string> seen;  // a live group first, then destroyed ones of the same name
      for (const json& g : d["groups"]) {
        if (!seen.insert(g.value("name", "unnamed")).second) continue;
        Group& group = groups[g.value("name", "unnamed")];
        group.name = g.value("name", "unnamed");
        group.backend = g.value("backend", "?");
        group.members = g["ranks"].get<std::vector<int>>();
        RankView& view = group.ranks[info.rank];
        view.rank = info.rank;
        for (const json& e : g["entries"]) {
          if (!e.contains("seq")) continue;  // send/recv: ranks differ by design
          Call c{e["seq"].get<int64_t>(), signature_of(e), e.value("state", "?"), e.value("stack", json())};
          view.calls[c.seq] = c;
        }
        world = std::max(world, static_cast<int>(group.members.size()));
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gradring-flight: error: %s\n", e.what());
    return 2;
  }

  Analysis a;
  std::set<int> no_dump;
  for (int r = 0; r < world; ++r)
    if (!dumps.count(r)) no_dump.insert(r);
  a.lines.push_back("gradring-flight: dumps of " + std::to_string(dumps.size()) + " of " + std::to_string(world) +
                    " ranks");
  for (const auto& [r, d] : dumps) {
    a.lines.push_back("  rank " + std::to_string(r) + ": " + d.reason);
    a.report["dumps"][std::to_string(r)] = d.reason;
  }
  a.report["world_size"] = world;
  a.report["no_dump"] = std::vector<int>(no_dump.begin(), no_dump.end());
  json culprit;  // the first group's finding wins; the default group first
  if (groups.count("default_pg")) analyze_group(groups.at("default_pg"), no_dump, a, culprit);
  for (const auto& [name, g] : groups)
    if (name != "default_pg") analyze_group(g, no_dump, a, culprit);
  if (!culprit.is_null()) {
    const auto odd = culprit["ranks"].get<std::vector<int>>();
    std::string s = rank_list(odd) + " " + culprit["what"].get<std::string>();
    if (culprit.contains("seq"))
      s += (culprit["what"].get<std::string>().find("no flight record") != std::string::npos
                ? "; the others were in #" + std::to_string(culprit["seq"].get<int64_t>()) + " " +
                      culprit["expected"].get<std::string>()
                : " at collective #" + std::to_string(culprit["seq"].get<int64_t>())) +
           " of group " + culprit["group"].get<std::string>();
    if (culprit.contains("call_site")) s += ", called at " + culprit["call_site"].get<std::string>();
    a.summary = s;
  } else if (!no_dump.empty()) {
    a.summary = rank_list(std::vector<int>(no_dump.begin(), no_dump.end())) + " left no dump";
  } else {
    a.summary = "no divergence found: every rank issued the same collectives";
  }
  a.report["culprit"] = culprit;
  a.report["summary"] = a.summary;
  if (as_json) {
    std::printf("%s\n", a.report.dump().c_str());
  } else {
    for (const std::string& line : a.lines) std::printf("%s\n", line.c_str());
    std::printf("summary: %s\n", a.summary.c_str());
  }
  return 0;
}
