// The flight recorder: an always-on ring buffer per process group holding its last calls
// (sequence number, op, dtype, shape, bytes, state with timestamps), dumped as one JSON file
// per rank when a collective fails or times out, on SIGUSR1 (gradring-run sends it before it
// stops a failed group) and on request; apps/gradring-flight reads every rank's dump and
// names the rank that diverged. Recording is a few stores into a preallocated slot
// (Note [Flight recorder slots] in the .cpp). GRADRING_FLIGHT_RECORDER_SIZE (default 2000,
// 0: off), GRADRING_FLIGHT_RECORDER_DIR (where dumps go; unset: no automatic dumps),
// GRADRING_FLIGHT_RECORDER_STACKS=1 (also the call's stack). See docs/reliability.md.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gr::distributed {

struct CallInfo;
class FlightRecorder;

enum class FlightState : uint8_t { Issued, Started, Completed, Failed };
const char* flight_state_name(FlightState s);

// One recorded call, as a Work carries it: where to record that it started and finished.
// Empty when the recorder is off.
struct FlightEntry {
  std::shared_ptr<FlightRecorder> recorder;
  uint64_t id = 0;
  explicit operator bool() const { return recorder != nullptr; }
  void started() const;
  // Failed: also writes the dumps (GRADRING_FLIGHT_RECORDER_DIR), `why` is the dump's reason.
  void finished(bool failed, const std::string& why = {}) const;
};

class FlightRecorder {
 public:
  static constexpr int kMaxDims = 8;
  static constexpr int kMaxFrames = 24;

  // `capacity` entries (> 0); registers itself for dumps until destroyed.
  FlightRecorder(size_t capacity, std::string backend, int rank, int size);
  ~FlightRecorder();
  FlightRecorder(const FlightRecorder&) = delete;
  FlightRecorder& operator=(const FlightRecorder&) = delete;

  // GRADRING_FLIGHT_RECORDER_SIZE (read once; a bad value throws naming the variable).
  static size_t configured_capacity();
  // Records a call as issued; `peer`/`tag` for send/recv (-1 otherwise).
  uint64_t record(const CallInfo& call, int peer, int tag);
  void set_state(uint64_t id, FlightState state);
  // The group's name, its members' ranks in the default group and its backend, for dumps.
  void set_group(std::string name, std::vector<int> ranks, std::string backend);
  void set_backend(std::string backend);
  size_t capacity() const { return capacity_; }
  // This group's part of a dump: a JSON object (name, backend, rank, size, ranks, entries
  // oldest first; "destroyed": written as the group was destroyed).
  std::string to_json(bool destroyed = false) const;
  // This group's rank if it is the default group ("default_pg"), else -1.
  int rank_in_default_group() const;

 private:
  struct Slot;    // one entry's fields, all relaxed atomics (flight_recorder.cpp)
  struct Frames;  // its stack, with GRADRING_FLIGHT_RECORDER_STACKS=1
  struct Snapshot;
  bool read(uint64_t id, Snapshot& out) const;

  const size_t capacity_;
  std::unique_ptr<Slot[]> slots_;
  std::unique_ptr<Frames[]> frames_;  // null unless stacks are recorded
  std::atomic<uint64_t> next_id_{0};
  mutable std::mutex info_mutex_;  // the identity below (set once, read by dumps)
  std::string backend_, name_;
  int rank_, size_;
  std::vector<int> ranks_;
};

// Writes this process's dump (every live group's recorder) to `dir` (empty:
// GRADRING_FLIGHT_RECORDER_DIR; neither: nothing is written) as rank<R>.json, R the rank in
// the default group (RANK, or the first group's rank); atomically (a temporary file renamed).
// Returns the path written, or "" when there was no directory. `reason` goes in the file.
std::string dump_flight_recorder(const std::string& reason = "requested", const std::string& dir = {});
// dump_flight_recorder(reason) for failures and timeouts: at most one in 200 ms (a failed
// group fails every later call at once), and it never throws (a failed dump is printed).
void dump_flight_recorder_after_failure(const std::string& reason);
// Whether failures write dumps (GRADRING_FLIGHT_RECORDER_DIR is set).
bool flight_recorder_dumps_enabled();
// The dump file of `rank` in `dir`: dir/rank<R>.json (gradring-run and gradring-flight use it).
std::string flight_dump_path(const std::string& dir, int rank);
// The rank that names this process's dump file (init_process_group sets it).
void set_flight_recorder_rank(int rank);

}  // namespace gr::distributed
