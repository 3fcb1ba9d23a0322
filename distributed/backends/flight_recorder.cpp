// The flight recorder's ring buffer (Note [Flight recorder slots]), the registry of live
// recorders, and the dumps: JSON per rank, on failure, on SIGUSR1, on request.
#include "distributed/backends/flight_recorder.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <limits.h>
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/env.h"
#include "core/error.h"
#include "distributed/backends/process_group.h"

namespace gr::distributed {

// Note [Flight recorder slots]
// Every call of a group passes the collective front once (Note [The collective front]),
// which records it here; the backend's worker marks it started (QueuedProcessGroup::run_job,
// or NCCL when it is enqueued on the stream) and Work::finish marks it completed or failed
// (NCCL: when the watchdog sees its end event). So the recorder sits in one place, not in
// every backend, and the hot path is: one fetch_add for an id, one clock read and about 20
// relaxed stores into a slot allocated when the recorder was made; no lock, no allocation.
//
// Writers. The issuing thread owns slot id % capacity while it writes: it stores kWriting
// in `id`, a release fence, the fields, then `id` = its id with release (a seqlock whose
// "odd" value is kWriting). Two issuers could only meet in one slot if `capacity` calls
// were issued while one of them was between its first and last store. Later updates
// (started, finished) come from other threads: each checks that the slot still holds its
// id, then stores its timestamp and the state. An update that finds the slot reused (the
// ring went round while the call was in flight) is dropped: the entry it belonged to is
// already gone. The one race left is an updater stopped between its check and its stores
// for `capacity` newer calls, which would stamp one time on a newer entry; a diagnostic
// record accepts that rather than a lock or a CAS loop per call.
//
// Readers (dumps, any thread, at any time): load `id` (acquire), copy the fields, an acquire
// fence, load `id` again; the copy is kept only if both loads saw the same finished id.
// Every field is a relaxed atomic, so a torn read is a discarded copy, never undefined
// behaviour. Dumps allocate, take the registry's mutex and write files; they are the cold
// path.

namespace {

constexpr uint64_t kWriting = ~uint64_t(0);

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const char* env_value(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// Every live recorder, for dumps.
struct Registry {
  std::mutex mutex;
  std::vector<FlightRecorder*> recorders;
  // The last words of destroyed groups' recorders (while dumps are enabled): a program
  // that fails usually unwinds its groups before a signal asks for the dump.
  std::vector<std::string> retired;
  std::mutex dump_mutex;  // one dump at a time
  int64_t last_failure_dump_ns = 0;
};
Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: dumps may run while statics die
  return *r;
}

std::atomic<int> g_process_rank{-1};

// SIGUSR1 asks for a dump; SIGTERM (mpirun stopping a job whose rank died, a scheduler
// ending a stuck one) and SIGPIPE (Gloo writing to a peer that died) dump and then
// terminate as they would have. A handler may not
// allocate or lock, so it writes the signal's number to a pipe that a thread of our own
// reads, and that thread dumps.
int g_signal_pipe[2] = {-1, -1};

void on_dump_signal(int sig) {
  const int saved = errno;
  const char byte = static_cast<char>(sig);
  [[maybe_unused]] ssize_t n = write(g_signal_pipe[1], &byte, 1);
  errno = saved;
}

void dump_on_signals() {
  for (;;) {
    char sig = 0;
    const ssize_t n = read(g_signal_pipe[0], &sig, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    try {
      dump_flight_recorder(sig == SIGTERM ? "signal SIGTERM" : sig == SIGPIPE ? "signal SIGPIPE" : "signal SIGUSR1");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gradring: flight recorder dump failed: %s\n", e.what());
    }
    if (sig == SIGTERM || sig == SIGPIPE) {
      signal(sig, SIG_DFL);
      kill(getpid(), sig);
    }
  }
}

// std::terminate (an exception escaping a thread: Gloo's transport threads throw on a peer
// that sent the wrong size) dumps before the previous handler aborts.
std::terminate_handler g_previous_terminate = nullptr;

[[noreturn]] void on_terminate() {
  std::string what = "std::terminate";
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      what += " after an uncaught exception: " + std::string(ex.what());
    } catch (...) {
      what += " after an uncaught exception";
    }
  }
  try {
    dump_flight_recorder(what);
  } catch (...) {
  }
  if (g_previous_terminate) g_previous_terminate();
  std::abort();
}

// Installs the dump triggers once, when dumps have a directory: the terminate handler, and
// the SIGUSR1, SIGTERM and SIGPIPE handlers and their thread (each unless the program has
// its own).
void install_dump_triggers() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!env_value("GRADRING_FLIGHT_RECORDER_DIR")) return;
    g_previous_terminate = std::set_terminate(on_terminate);
    // Only signals the program has left alone (the default action) are taken.
    std::vector<int> signals;
    for (int sig : {SIGUSR1, SIGTERM, SIGPIPE}) {
      struct sigaction old {};
      if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) signals.push_back(sig);
    }
    if (signals.empty() || pipe2(g_signal_pipe, O_CLOEXEC) != 0) return;
    std::thread(dump_on_signals).detach();
    struct sigaction sa {};
    sa.sa_handler = on_dump_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (int sig : signals) sigaction(sig, &sa, nullptr);
  });
}

// "FILE(FUNCTION+0xOFFSET)": FILE absolute, OFFSET from where FILE is loaded (what addr2line
// takes for position-independent code), FUNCTION when the dynamic symbol table has it
// (gradring-flight asks addr2line for the others).
std::string symbolize(uintptr_t address) {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(address), &info) || !info.dli_fname) return "?";
  std::string file = info.dli_fname;
  if (file.empty() || file[0] != '/') {
    char path[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n > 0) file.assign(path, static_cast<size_t>(n));
  }
  std::string name;
  if (info.dli_sname) {
    int status = 0;
    char* demangled = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
    name = status == 0 && demangled ? demangled : info.dli_sname;
    std::free(demangled);
  }
  char offset[32];
  std::snprintf(offset, sizeof offset, "+0x%zx", static_cast<size_t>(address - reinterpret_cast<uintptr_t>(info.dli_fbase)));
  return file + "(" + name + offset + ")";
}

}  // namespace

struct FlightRecorder::Slot {
  std::atomic<uint64_t> id{0};  // the entry's id; 0: empty; kWriting: being written
  std::atomic<uint64_t> sequence{0};
  std::atomic<int64_t> bytes{0};
  std::atomic<int64_t> issued_ns{0}, started_ns{0}, finished_ns{0};
  std::atomic<int64_t> dims[kMaxDims];
  std::atomic<int32_t> op{0}, reduce_op{-1}, dtype{-1}, ndim{-1}, root{-1}, peer{-1}, tag{-1}, tensors{0};
  std::atomic<uint8_t> state{0};
};

struct FlightRecorder::Frames {
  std::atomic<int32_t> count{0};
  std::atomic<uintptr_t> pc[kMaxFrames];
};

const char* flight_state_name(FlightState s) {
  switch (s) {
    case FlightState::Issued: return "issued";
    case FlightState::Started: return "started";
    case FlightState::Completed: return "completed";
    case FlightState::Failed: return "failed";
  }
  return "?";
}

void FlightEntry::started() const {
  if (recorder) recorder->set_state(id, FlightState::Started);
}

void FlightEntry::finished(bool failed, const std::string& why) const {
  if (!recorder) return;
  recorder->set_state(id, failed ? FlightState::Failed : FlightState::Completed);
  if (failed) dump_flight_recorder_after_failure("collective failed: " + why);
}

size_t FlightRecorder::configured_capacity() {
  static const size_t capacity = [] {
    const char* v = env_value("GRADRING_FLIGHT_RECORDER_SIZE");
    return v ? static_cast<size_t>(parse_whole_number("GRADRING_FLIGHT_RECORDER_SIZE", v, 0, 10'000'000, "entries"))
             : size_t(2000);
  }();
  return capacity;
}

FlightRecorder::FlightRecorder(size_t capacity, std::string backend, int rank, int size)
    : capacity_(capacity),
      backend_(std::move(backend)),
      name_("unnamed"),
      rank_(rank),
      size_(size) {
  GR_CHECK(capacity > 0, "FlightRecorder: capacity must be positive");
  slots_ = std::make_unique<Slot[]>(capacity);
  const char* stacks = env_value("GRADRING_FLIGHT_RECORDER_STACKS");
  if (stacks && std::strcmp(stacks, "0") != 0) frames_ = std::make_unique<Frames[]>(capacity);
  for (int r = 0; r < size; ++r) ranks_.push_back(r);
  if (frames_) {
    void* warm[1];
    backtrace(warm, 1);  // loads the unwinder now, not on the first recorded call
  }
  install_dump_triggers();
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  reg.recorders.push_back(this);
}

FlightRecorder::~FlightRecorder() {
  Registry& reg = registry();
  std::string last_words;
  // A recorder that never recorded a call (a DETAIL wrapper's, switched off at once) has
  // nothing to say.
  if (flight_recorder_dumps_enabled() && next_id_.load(std::memory_order_relaxed) > 0) {
    try {
      last_words = to_json(/*destroyed=*/true);
    } catch (...) {
    }
  }
  std::lock_guard lock(reg.mutex);
  std::erase(reg.recorders, this);
  if (!last_words.empty()) {
    reg.retired.push_back(std::move(last_words));
    constexpr size_t kRetiredKept = 16;
    if (reg.retired.size() > kRetiredKept) reg.retired.erase(reg.retired.begin());
  }
}

void FlightRecorder::set_group(std::string name, std::vector<int> ranks, std::string backend) {
  std::lock_guard lock(info_mutex_);
  name_ = std::move(name);
  ranks_ = std::move(ranks);
  backend_ = std::move(backend);
}

void FlightRecorder::set_backend(std::string backend) {
  std::lock_guard lock(info_mutex_);
  backend_ = std::move(backend);
}

uint64_t FlightRecorder::record(const CallInfo& call, int peer, int tag) {
  constexpr auto R = std::memory_order_relaxed;
  const uint64_t id = next_id_.fetch_add(1, R);
  Slot& s = slots_[id % capacity_];
  s.id.store(kWriting, R);
  std::atomic_thread_fence(std::memory_order_release);
  const bool collective = call.type != OpType::Send && call.type != OpType::Recv;
  s.sequence.store(collective ? call.sequence : 0, R);
  s.op.store(static_cast<int32_t>(call.type), R);
  s.reduce_op.store(call.reduce_op ? static_cast<int32_t>(*call.reduce_op) : -1, R);
  s.root.store(call.root, R);
  s.peer.store(peer, R);
  s.tag.store(tag, R);
  s.tensors.store(static_cast<int32_t>(call.tensors), R);
  const Tensor& t = call.tensor;
  if (t.defined()) {
    const int64_t ndim = std::min<int64_t>(t.dim(), kMaxDims);
    s.dtype.store(static_cast<int32_t>(t.scalar_type()), R);
    s.ndim.store(static_cast<int32_t>(t.dim()), R);
    for (int64_t d = 0; d < ndim; ++d) s.dims[d].store(t.size(d), R);
    s.bytes.store(static_cast<int64_t>(t.nbytes()), R);
  } else {
    s.dtype.store(-1, R);
    s.ndim.store(-1, R);
    s.bytes.store(0, R);
  }
  if (frames_) {
    void* pcs[kMaxFrames];
    const int n = backtrace(pcs, kMaxFrames);
    Frames& f = frames_[id % capacity_];
    for (int i = 0; i < n; ++i) f.pc[i].store(reinterpret_cast<uintptr_t>(pcs[i]), R);
    f.count.store(n, R);
  }
  s.issued_ns.store(now_ns(), R);
  s.started_ns.store(0, R);
  s.finished_ns.store(0, R);
  s.state.store(static_cast<uint8_t>(FlightState::Issued), R);
  s.id.store(id + 1, std::memory_order_release);  // ids in slots start at 1: 0 is "empty"
  return id + 1;
}

void FlightRecorder::set_state(uint64_t id, FlightState state) {
  Slot& s = slots_[(id - 1) % capacity_];
  if (s.id.load(std::memory_order_acquire) != id) return;  // reused: see the Note
  (state == FlightState::Started ? s.started_ns : s.finished_ns).store(now_ns(), std::memory_order_relaxed);
  // Started never overwrites a finish that raced ahead of it (the waiter ran the job).
  uint8_t current = s.state.load(std::memory_order_relaxed);
  while (current < static_cast<uint8_t>(state) &&
         !s.state.compare_exchange_weak(current, static_cast<uint8_t>(state), std::memory_order_release)) {
  }
}

struct FlightRecorder::Snapshot {
  uint64_t id, sequence;
  int64_t bytes, issued_ns, started_ns, finished_ns;
  int64_t dims[kMaxDims];
  int32_t op, reduce_op, dtype, ndim, root, peer, tag, tensors, frames_count;
  uintptr_t frames[kMaxFrames];
  uint8_t state;
};

// Copies slot `index` (the header calls it `id`) if it holds a whole entry: Note [Flight
// recorder slots], the reader's side.
bool FlightRecorder::read(uint64_t index, Snapshot& o) const {
  constexpr auto R = std::memory_order_relaxed;
  const Slot& s = slots_[index];
  const uint64_t id = s.id.load(std::memory_order_acquire);
  if (id == 0 || id == kWriting) return false;
  o.id = id;
  o.sequence = s.sequence.load(R);
  o.bytes = s.bytes.load(R);
  o.issued_ns = s.issued_ns.load(R);
  o.started_ns = s.started_ns.load(R);
  o.finished_ns = s.finished_ns.load(R);
  o.op = s.op.load(R);
  o.reduce_op = s.reduce_op.load(R);
  o.dtype = s.dtype.load(R);
  o.ndim = s.ndim.load(R);
  for (int d = 0; d < std::min(o.ndim, kMaxDims); ++d) o.dims[d] = s.dims[d].load(R);
  o.root = s.root.load(R);
  o.peer = s.peer.load(R);
  o.tag = s.tag.load(R);
  o.tensors = s.tensors.load(R);
  o.frames_count = 0;
  if (frames_) {
    const Frames& f = frames_[index];
    o.frames_count = std::min(f.count.load(R), kMaxFrames);
    for (int i = 0; i < o.frames_count; ++i) o.frames[i] = f.pc[i].load(R);
  }
  o.state = s.state.load(R);
  std::atomic_thread_fence(std::memory_order_acquire);
  return s.id.load(R) == id;
}

std::string FlightRecorder::to_json(bool destroyed) const {
  nlohmann::json group;
  {
    std::lock_guard lock(info_mutex_);
    group = {{"name", name_}, {"backend", backend_}, {"rank", rank_}, {"size", size_}, {"ranks", ranks_}};
  }
  group["capacity"] = capacity_;
  if (destroyed) group["destroyed"] = true;
  std::vector<nlohmann::json> entries;
  // Every slot's entry, oldest first. A slot rewritten while it was read is left out; one
  // rewritten before it was read shows its newer entry.
  std::vector<Snapshot> taken;
  taken.reserve(capacity_);
  for (uint64_t i = 0; i < capacity_; ++i) {
    Snapshot e;
    if (read(i, e)) taken.push_back(e);
  }
  std::sort(taken.begin(), taken.end(), [](const Snapshot& a, const Snapshot& b) { return a.id < b.id; });
  for (const Snapshot& e : taken) {
    const auto type = static_cast<OpType>(e.op);
    const bool p2p = type == OpType::Send || type == OpType::Recv;
    nlohmann::json j = {{"id", e.id}, {"op", op_type_name(type)}};
    if (!p2p) j["seq"] = e.sequence;
    if (e.reduce_op >= 0) j["reduce_op"] = reduce_op_name(static_cast<ReduceOp>(e.reduce_op));
    if (e.dtype >= 0) {
      std::ostringstream dtype;
      dtype << static_cast<ScalarType>(e.dtype);
      j["dtype"] = dtype.str();
      j["shape"] = std::vector<int64_t>(e.dims, e.dims + std::min(e.ndim, kMaxDims));
    }
    j["bytes"] = e.bytes;
    j["tensors"] = e.tensors;
    if (e.root >= 0) j["root"] = e.root;
    if (p2p) {
      j["peer"] = e.peer;
      j["tag"] = e.tag;
    }
    j["state"] = flight_state_name(static_cast<FlightState>(e.state));
    j["issued_us"] = e.issued_ns / 1000;
    if (e.started_ns) j["started_us"] = e.started_ns / 1000;
    if (e.finished_ns) j["finished_us"] = e.finished_ns / 1000;
    if (e.frames_count > 0) {
      nlohmann::json stack = nlohmann::json::array();
      for (int i = 0; i < e.frames_count; ++i) stack.push_back(symbolize(e.frames[i]));
      j["stack"] = std::move(stack);
    }
    entries.push_back(std::move(j));
  }
  // One entry per line, so that a dump reads (and greps) well.
  std::string text = group.dump();
  text.pop_back();  // the closing brace
  text += ",\n  \"entries\": [";
  for (size_t i = 0; i < entries.size(); ++i) text += (i ? ",\n   " : "\n   ") + entries[i].dump();
  return text + "\n  ]}";
}

int FlightRecorder::rank_in_default_group() const {
  std::lock_guard lock(info_mutex_);
  return name_ == "default_pg" ? rank_ : -1;
}

void set_flight_recorder_rank(int rank) { g_process_rank.store(rank); }

std::string flight_dump_path(const std::string& dir, int rank) { return dir + "/rank" + std::to_string(rank) + ".json"; }

bool flight_recorder_dumps_enabled() { return env_value("GRADRING_FLIGHT_RECORDER_DIR") != nullptr; }

void dump_flight_recorder_after_failure(const std::string& reason) {
  if (!flight_recorder_dumps_enabled()) return;
  Registry& reg = registry();
  {
    std::lock_guard lock(reg.dump_mutex);
    const int64_t now = now_ns();
    if (now - reg.last_failure_dump_ns < 200'000'000) return;
    reg.last_failure_dump_ns = now;
  }
  try {
    dump_flight_recorder(reason);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gradring: flight recorder dump failed: %s\n", e.what());
  }
}

std::string dump_flight_recorder(const std::string& reason, const std::string& dir_arg) {
  const char* env_dir = env_value("GRADRING_FLIGHT_RECORDER_DIR");
  const std::string dir = !dir_arg.empty() ? dir_arg : env_dir ? env_dir : "";
  if (dir.empty()) return {};
  Registry& reg = registry();
  std::lock_guard dump_lock(reg.dump_mutex);
  nlohmann::json head = {{"format", "gradring-flight-recorder"}, {"version", 1}, {"reason", reason},
                         {"pid", static_cast<int64_t>(getpid())}, {"time_us", now_ns() / 1000}};
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  head["host"] = host;
  if (const char* w = env_value("WORLD_SIZE")) head["world_size"] = std::atoi(w);
  int rank = g_process_rank.load();
  if (rank < 0 && env_value("RANK")) rank = std::atoi(env_value("RANK"));
  std::vector<std::string> groups;
  {
    std::lock_guard lock(reg.mutex);
    for (const FlightRecorder* r : reg.recorders) {
      groups.push_back(r->to_json());
      if (rank < 0) rank = r->rank_in_default_group();
    }
    groups.insert(groups.end(), reg.retired.begin(), reg.retired.end());
  }
  head["rank"] = std::max(rank, 0);
  std::string text = head.dump();
  text.pop_back();
  text += ",\n \"groups\": [";
  for (size_t i = 0; i < groups.size(); ++i) text += (i ? ",\n  " : "\n  ") + groups[i];
  text += "\n ]}\n";
  rank = std::max(rank, 0);
  const std::string path = flight_dump_path(dir, rank);
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    GR_CHECK(out.good(), "flight recorder: cannot write ", tmp, ": ", std::strerror(errno),
             " (is GRADRING_FLIGHT_RECORDER_DIR an existing, writable folder?)");
    out << text;
    out.close();
    GR_CHECK(out.good(), "flight recorder: writing ", tmp, " failed: ", std::strerror(errno));
  }
  GR_CHECK(std::rename(tmp.c_str(), path.c_str()) == 0, "flight recorder: cannot rename ", tmp, " to ", path, ": ",
           std::strerror(errno));
  std::fprintf(stderr, "gradring: flight recorder: wrote %s (gradring-flight %s reads every rank's dump)\n",
               path.c_str(), dir.c_str());
  return path;
}

}  // namespace gr::distributed
