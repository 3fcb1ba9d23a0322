// gradring-flight's model of flight recorder dumps (written by distributed/backends/
// flight_recorder.cpp): read_dump checks one rank's file and adds it to a Dumps; analyze
// names the rank that diverged. Dumps come from crashed jobs and may be cut short or edited:
// every field is checked, and a malformed one is a gr::Error naming the file and the field.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gr::flight {

// Ranks and world sizes at or above this are refused: far above any job, low enough that
// the per-rank work of an analysis stays small.
constexpr int64_t kMaxRanks = int64_t(1) << 20;

struct Call {
  int64_t seq = -1;
  std::string signature;  // "allreduce (sum) float32 [1000]": what every rank must agree on
  std::string state;      // issued, started, completed, failed
  std::vector<std::string> stack;  // GRADRING_FLIGHT_RECORDER_STACKS=1: the frames, innermost first
};

struct RankView {  // one rank's record of one group
  int rank = 0;
  std::map<int64_t, Call> calls;  // collectives by sequence number
};

struct DumpInfo {
  int rank = 0;
  int world_size = 0;
  std::string reason;
};

struct Group {
  std::string name, backend;
  std::vector<int> members;  // ranks in the default group
  std::map<int, RankView> ranks;
};

struct Dumps {
  std::map<int, DumpInfo> dumps;
  std::map<std::string, Group> groups;
  int world = 0;  // the largest world size or group any dump names
};

// Parses `text`, one rank<R>.json, into `dumps`. `source` (the file) names it in errors.
void read_dump(const std::string& text, const std::string& source, Dumps& dumps);

// A frame as the recorder writes it, "FILE(FUNCTION+0xOFFSET)"; FUNCTION may be empty.
struct Frame {
  std::string file, function;
  uint64_t offset = 0;
};
// False when `text` is not of that form.
bool parse_frame(const std::string& text, Frame& out);
// Names a frame the recorder could not name (FUNCTION empty), or returns "" when it cannot.
// addr2line_resolver asks addr2line (when installed); tests and the fuzz target pass their own.
using FrameResolver = std::function<std::string(const Frame& frame)>;
std::string addr2line_resolver(const Frame& frame);

struct Analysis {
  nlohmann::json report = nlohmann::json::object();
  std::vector<std::string> lines;  // the human-readable report
  std::string summary;
};
Analysis analyze(const Dumps& dumps, const FrameResolver& resolve);

}  // namespace gr::flight
