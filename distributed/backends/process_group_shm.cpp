// ProcessGroupShm: the segment's layout, the rendezvous, the round protocol and each
// collective as a sequence of rounds (Note [Rounds] below).
#include "distributed/backends/process_group_shm.h"

#include <immintrin.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "core/env.h"
#include "core/error.h"
#include "distributed/backends/init.h"
#include "distributed/backends/reduce_kernels.h"

namespace gr::distributed {

// Note [Rounds]
// The segment holds, for every rank, two slots (for odd and even rounds) and a state record
// whose `arrived` counter is the last round the rank has written. In round k a rank writes
// its slot of parity k, sets arrived = k, and waits until every rank's arrived >= k; then it
// may read every slot of round k. It may write its parity-k slot again only in round k + 2,
// and it gets there only after seeing every rank at k + 1, which each reached after it had
// finished reading round k: so one meeting per round is enough, with no second "done
// reading" barrier. The counters only grow and each has one writer (release stores,
// acquire loads), so no locks are needed.
//
// A collective is ceil(bytes / chunk) rounds (at least one). All-reduce: each rank writes its
// chunk, then reduces all the slots in rank order into its own tensor (every rank computes
// the whole sum: fine for the few ranks of one machine, and the results agree bit for bit).
// Broadcast: the root writes, the others copy. All-gather: everyone writes, everyone copies
// every slot. Reduce: like all-reduce, only the root computes. Reduce-scatter: one reduce
// per rank. Barrier: one round without data. Each slot starts with the Call being made,
// checked against every other rank's, so ranks that issue different collectives fail with
// both calls named instead of mixing unrelated data.
//
// Send/recv use a one-chunk channel per ordered pair of ranks: the sender waits until the
// channel is empty, writes a chunk and bumps `posted`; the receiver waits for it, checks the
// tag and size, copies it and bumps `taken`. A message that fits one chunk completes on the
// sending side without waiting for the receiver. Messages between two ranks are delivered
// in the order they are sent.

namespace {

constexpr uint64_t kMagic = 0x67726d2d73686d31ULL;  // "grm-shm1"
constexpr size_t kLine = 64;
constexpr size_t kSlotHeader = kLine;  // a Call, padded to a cache line

struct alignas(kLine) RankState {
  uint64_t arrived;  // the last round this rank has written (atomic)
  uint64_t pid_namespace;
  int32_t pid;
  int32_t failed;    // 1 once a collective failed on this rank (atomic)
};

struct alignas(kLine) Channel {  // one direction between two ranks
  uint64_t posted;   // chunks the sender has written (atomic)
  uint64_t taken;    // chunks the receiver has copied out (atomic)
  int64_t tag;
  uint64_t message_bytes;
  uint64_t chunk_bytes;
};

template <class T>
T acquire_load(const T& v) {
  return std::atomic_ref<T>(const_cast<T&>(v)).load(std::memory_order_acquire);
}
template <class T>
void release_store(T& v, T x) {
  std::atomic_ref<T>(v).store(x, std::memory_order_release);
}

std::string read_first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// This machine's identity (its boot and host name): ranks that differ cannot share memory.
std::string machine_id() {
  char host[HOST_NAME_MAX + 1] = {};
  ::gethostname(host, sizeof host - 1);
  return std::string(host) + " (boot " + read_first_line("/proc/sys/kernel/random/boot_id") + ")";
}

uint64_t pid_namespace() {
  char link[64] = {};
  ssize_t n = ::readlink("/proc/self/ns/pid", link, sizeof link - 1);  // "pid:[4026531836]"
  if (n <= 0) return 0;
  const char* open = std::strchr(link, '[');
  return open ? std::strtoull(open + 1, nullptr, 10) : 0;
}

// True if `pid` (in our pid namespace) has exited: gone, or a zombie not yet reaped.
bool has_exited(int pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  std::string stat = read_first_line(("/proc/" + std::to_string(pid) + "/stat").c_str());
  size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && (stat[close + 2] == 'Z' || stat[close + 2] == 'X');
}

std::string describe_call(const ProcessGroupShm::Call& c) {
  std::ostringstream out;
  out << "#" << c.sequence << " " << op_type_name(static_cast<OpType>(c.kind));
  if (c.op >= 0) out << " (" << reduce_op_name(static_cast<ReduceOp>(c.op)) << ")";
  if (c.kind != static_cast<int32_t>(OpType::Barrier))
    out << " " << dtype_name(static_cast<ScalarType>(c.dtype)) << " of " << c.bytes << " bytes";
  if (c.root >= 0) out << " root " << c.root;
  return out.str();
}

// Calls f(offset, n) for each piece of `total` bytes, `step` at a time: at least once, so that
// an empty tensor still takes part in one round.
template <class F>
void for_each_chunk(size_t total, size_t step, F f) {
  size_t offset = 0;
  do {
    const size_t n = std::min(step, total - offset);
    f(offset, n);
    offset += n;
  } while (offset < total);
}

bool same_call(const ProcessGroupShm::Call& a, const ProcessGroupShm::Call& b) {
  return a.sequence == b.sequence && a.kind == b.kind && a.op == b.op && a.dtype == b.dtype && a.root == b.root &&
         a.bytes == b.bytes;
}

}  // namespace

// The segment: a header line, `size` rank states, size x size channels, 2 x size slots, and
// size x size channel buffers. A channel buffer is at most 64 KiB, and smaller with many
// ranks, so that all of them together stay within 64 MiB (send/recv are rare next to the
// collectives, which use the slots).
struct ProcessGroupShm::Layout {
  uint64_t magic;
  uint64_t size;
  uint64_t chunk_bytes;

  static size_t channel_bytes(int n, size_t chunk) {
    const size_t fair = (size_t(64) << 20) / (size_t(n) * n) / kLine * kLine;
    return std::max<size_t>(4096, std::min({chunk, size_t(64) << 10, fair}));
  }
  static size_t states_offset() { return kLine; }
  static size_t channels_offset(int n) { return states_offset() + n * sizeof(RankState); }
  static size_t slots_offset(int n) { return channels_offset(n) + size_t(n) * n * sizeof(Channel); }
  static size_t slot_bytes(size_t chunk) { return kSlotHeader + chunk; }
  static size_t buffers_offset(int n, size_t chunk) { return slots_offset(n) + 2 * size_t(n) * slot_bytes(chunk); }
  static size_t total(int n, size_t chunk) { return buffers_offset(n, chunk) + size_t(n) * n * channel_bytes(n, chunk); }

  char* base() { return reinterpret_cast<char*>(this); }
  RankState& state(int r) { return reinterpret_cast<RankState*>(base() + states_offset())[r]; }
  Channel& channel(int src, int dst) {
    return reinterpret_cast<Channel*>(base() + channels_offset(static_cast<int>(size)))[src * size + dst];
  }
  size_t channel_bytes() const { return channel_bytes(static_cast<int>(size), chunk_bytes); }
  char* buffer(int src, int dst) {
    return base() + buffers_offset(static_cast<int>(size), chunk_bytes) + (src * size + dst) * channel_bytes();
  }
};

size_t ProcessGroupShm::parse_chunk_kb(const char* value) {
  if (!value || !*value) return ShmOptions{}.chunk_bytes;
  return static_cast<size_t>(parse_whole_number("GRADRING_SHM_CHUNK_KB", value, 4, 1 << 20, "KiB")) << 10;
}

ProcessGroupShm::ProcessGroupShm(std::shared_ptr<Store> store, int rank, int size, const ShmOptions& options)
    : QueuedProcessGroup(rank, size, 1, /*waiter_runs_jobs=*/true), chunk_bytes_(options.chunk_bytes) {
  GR_CHECK(store != nullptr, "shm: a store is needed for the rendezvous");
  GR_CHECK(chunk_bytes_ >= 4096 && chunk_bytes_ % kLine == 0, "shm: chunk_bytes must be a multiple of 64 of at least 4096, got ",
           chunk_bytes_);
  timeout_ = options.timeout;
  const std::string machine = machine_id();
  const size_t bytes = Layout::total(size, chunk_bytes_);
  const std::string attached = "shm/attached/" + std::to_string(rank);
  if (rank == 0) {
    std::random_device rd;
    std::ostringstream name;
    name << "/gradring-shm-" << ::getpid() << "-" << std::hex << ((uint64_t(rd()) << 32) | rd());
    segment_ = SharedMemory::create(name.str(), bytes);
    layout_ = reinterpret_cast<Layout*>(segment_.data());
    layout_->magic = kMagic;
    layout_->size = static_cast<uint64_t>(size);
    layout_->chunk_bytes = chunk_bytes_;
    const std::string text = name.str() + "\n" + std::to_string(chunk_bytes_) + "\n" + machine;
    store->set("shm/segment", Bytes(text.begin(), text.end()));
  } else {
    const Bytes b = store->get("shm/segment");
    std::istringstream in(std::string(b.begin(), b.end()));
    std::string name, chunk, theirs;
    std::getline(in, name);
    std::getline(in, chunk);
    std::getline(in, theirs);
    try {
      GR_CHECK(theirs == machine, "shm: rank 0 runs on ", theirs, " but rank ", rank, " on ", machine,
               ": the shm backend needs every rank on one machine (use gloo between machines)");
      GR_CHECK(chunk == std::to_string(chunk_bytes_), "shm: rank 0 uses chunks of ", chunk, " bytes but rank ", rank,
               " of ", chunk_bytes_, " (set GRADRING_SHM_CHUNK_KB alike on every rank)");
      try {
        segment_ = SharedMemory::open(name, bytes);
      } catch (const gr::Error& e) {
        GR_ERROR("shm: rank ", rank, " cannot map the segment rank 0 made: ", e.what(),
                 " (ranks in containers need a shared /dev/shm)");
      }
      layout_ = reinterpret_cast<Layout*>(segment_.data());
      GR_CHECK(layout_->magic == kMagic && layout_->size == static_cast<uint64_t>(size), "shm: the segment '", name,
               "' is not this group's (size ", layout_->size, ", expected ", size, ")");
    } catch (const gr::Error& e) {
      const std::string why = std::string("error: ") + e.what();
      store->set(attached, Bytes(why.begin(), why.end()));
      throw;
    }
  }
  RankState& me = layout_->state(rank);
  me.pid_namespace = pid_namespace();
  release_store(me.pid, static_cast<int32_t>(::getpid()));
  store->set(attached, Bytes{'o', 'k'});
  if (rank == 0) {
    // Every rank has mapped the segment (or said why not): its name can go.
    for (int r = 1; r < size; ++r) {
      const Bytes v = store->get("shm/attached/" + std::to_string(r));
      const std::string s(v.begin(), v.end());
      GR_CHECK(s == "ok", "shm: rank ", r, " could not join: ", s.substr(s.find(':') + 2));
    }
    segment_.unlink();
  }
}

ProcessGroupShm::~ProcessGroupShm() { shutdown(); }

std::string ProcessGroupShm::segment_name() const { return segment_.name(); }

char* ProcessGroupShm::slot(int r, uint64_t round) const {
  const size_t index = (round & 1) * size_ + r;
  return layout_->base() + Layout::slots_offset(size_) + index * Layout::slot_bytes(chunk_bytes_);
}

void ProcessGroupShm::check_peers(const std::string& waiting_for) {
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    const RankState& s = layout_->state(r);
    GR_CHECK(!acquire_load(s.failed), "rank ", r, " gave up on a collective of this group while this rank waited for ",
             waiting_for, " (rank ", r, "'s own error says why)");
    const int pid = acquire_load(s.pid);
    GR_CHECK(!(pid > 0 && s.pid_namespace == layout_->state(rank_).pid_namespace && has_exited(pid)), "rank ", r,
             " (pid ", pid, ") has exited while this rank waited for ", waiting_for);
  }
}

template <class Ready, class Describe>
void ProcessGroupShm::await(Ready ready, Describe waiting_for) {
  if (ready()) return;
  // Note [How the shm backend waits]
  // A thread that waits for its own collective and runs it (Note [The waiter runs the job])
  // has nothing else to do: it polls, yielding the CPU between looks, for as long as
  // Work::wait would (GRADRING_WAIT_SPIN_US), so that it notices the other ranks at once.
  // The worker runs collectives while the caller computes (DDP's earlier buckets): it
  // yields for 100 us, then sleeps in 50 us steps, so that it takes little from the
  // computation on its CPU. Timer wake-ups come on time on the VMs we measured, where
  // thread-to-thread wake-ups do not; a small timer slack keeps the steps near 50 us.
  const bool waiter = on_waiting_thread();
  if (!waiter) {
    thread_local bool slack_set = [] { return ::prctl(PR_SET_TIMERSLACK, 1000UL) == 0; }();
    (void)slack_set;
  }
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto yield_for = waiter ? std::chrono::duration_cast<clock::duration>(Work::spin_limit())
                                : std::chrono::duration_cast<clock::duration>(std::chrono::microseconds(100));
  auto next_check = start;
  for (int spins = 0;; ++spins) {
    if (ready()) return;
    if (spins < 200) {
      _mm_pause();
      continue;
    }
    const auto now = clock::now();
    if (now >= next_check) {
      check_peers(waiting_for());
      next_check = now + std::chrono::milliseconds(10);
    }
    GR_CHECK(timeout_.count() <= 0 || now - start < timeout_, "no progress for ", timeout_.count(), " ms waiting for ",
             waiting_for(), " (a rank may be stuck or have issued different collectives)");
    if (now - start < yield_for) ::sched_yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

uint64_t ProcessGroupShm::exchange(const Call& issued, const void* mine, size_t bytes) {
  Call c = issued;
  c.sequence = collectives_run_ - 1;
  const uint64_t k = ++round_;
  char* s = slot(rank_, k);
  std::memcpy(s, &c, sizeof c);
  if (bytes) std::memcpy(s + kSlotHeader, mine, bytes);
  release_store(layout_->state(rank_).arrived, k);
  int behind = -1;  // the rank last seen behind, for the error
  await(
      [&] {
        for (int r = 0; r < size_; ++r)
          if (acquire_load(layout_->state(r).arrived) < k) {
            behind = r;
            return false;
          }
        return true;
      },
      [&] { return "rank " + std::to_string(behind) + " to reach " + describe_call(c); });
  for (int r = 0; r < size_; ++r) {
    Call theirs;
    std::memcpy(&theirs, slot(r, k), sizeof theirs);
    GR_CHECK(same_call(theirs, c), "ranks issued different collectives: rank ", rank_, " called ", describe_call(c),
             ", rank ", r, " called ", describe_call(theirs),
             " (every rank must issue the same collectives, with the same sizes, in the same order)");
  }
  return k;
}

void ProcessGroupShm::reduce_rounds(const Call& c, ReduceOp op, const Tensor& in, char* out, int reducer) {
  const ReduceKernel kernel = reduce_kernel(op, in.scalar_type(), "shm");
  const char* data = static_cast<const char*>(in.data_ptr());
  const size_t element = in.element_size();
  for_each_chunk(in.nbytes(), chunk_bytes_ / element * element, [&](size_t offset, size_t n) {
    const uint64_t k = exchange(c, data + offset, n);
    if (reducer >= 0 && reducer != rank_) return;
    char* dst = out + offset;
    kernel(dst, slot(0, k) + kSlotHeader, slot(1, k) + kSlotHeader, n / element);
    for (int r = 2; r < size_; ++r) kernel(dst, dst, slot(r, k) + kSlotHeader, n / element);
  });
}

ProcessGroupShm::Call ProcessGroupShm::header(const CallInfo& call) {
  // The sequence number is stamped when the collective runs (exchange): the worker's order
  // is the order the rounds happen in, whichever threads issued the calls.
  const Tensor& t = call.tensor;
  return Call{0, static_cast<int32_t>(call.type), call.reduce_op ? static_cast<int32_t>(*call.reduce_op) : -1,
              t.defined() ? static_cast<int32_t>(t.scalar_type()) : -1, call.root, t.defined() ? t.nbytes() : 0};
}

template <class Body>
WorkPtr ProcessGroupShm::run(const CallInfo& call, std::vector<Tensor> outputs, bool collective, Body body) {
  return enqueue(call, std::move(outputs), [this, collective, body = std::move(body)]() mutable {
    GR_CHECK(failed_.empty(), "an earlier collective of this group failed, so it cannot be used any more (", failed_,
             ")");
    collectives_run_ += collective;
    try {
      body();
    } catch (const std::exception& e) {
      failed_ = e.what();
      release_store(layout_->state(rank_).failed, 1);
      throw;
    }
  });
}

WorkPtr ProcessGroupShm::do_allreduce(Tensor& tensor, ReduceOp op, const CallInfo& call) {
  Tensor t = tensor;
  return run(call, {t}, true, [this, t, op, c = header(call)] {
    if (size_ > 1) reduce_rounds(c, op, t, static_cast<char*>(t.data_ptr()), /*reducer=*/-1);
  });
}

WorkPtr ProcessGroupShm::do_broadcast(Tensor& tensor, int root, const CallInfo& call) {
  Tensor t = tensor;
  return run(call, {t}, true, [this, t, root, c = header(call)] {
    if (size_ == 1) return;
    char* data = static_cast<char*>(t.data_ptr());
    for_each_chunk(t.nbytes(), chunk_bytes_, [&](size_t offset, size_t n) {
      const uint64_t k = exchange(c, data + offset, rank_ == root ? n : 0);
      if (rank_ != root) std::memcpy(data + offset, slot(root, k) + kSlotHeader, n);
    });
  });
}

WorkPtr ProcessGroupShm::do_allgather(std::vector<Tensor>& outputs, const Tensor& input, const CallInfo& call) {
  std::vector<Tensor> outs = outputs;
  Tensor in = input;
  return run(call, outs, true, [this, outs, in, c = header(call)] {
    const char* data = static_cast<const char*>(in.data_ptr());
    const size_t total = in.nbytes();
    if (size_ == 1) {
      if (total) std::memcpy(outs[0].data_ptr(), data, total);
      return;
    }
    for_each_chunk(total, chunk_bytes_, [&](size_t offset, size_t n) {
      const uint64_t k = exchange(c, data + offset, n);
      for (int r = 0; r < size_; ++r) std::memcpy(static_cast<char*>(outs[r].data_ptr()) + offset, slot(r, k) + kSlotHeader, n);
    });
  });
}

WorkPtr ProcessGroupShm::do_reduce(Tensor& tensor, int root, ReduceOp op, const CallInfo& call) {
  Tensor t = tensor;
  return run(call, {t}, true, [this, t, root, op, c = header(call)] {
    if (size_ > 1) reduce_rounds(c, op, t, static_cast<char*>(t.data_ptr()), root);
  });
}

WorkPtr ProcessGroupShm::do_reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op,
                                           const CallInfo& call) {
  Tensor out = output;
  std::vector<Tensor> ins = inputs;
  return run(call, {out}, true, [this, out, ins, op, c = header(call)] {
    if (size_ == 1) {
      if (out.nbytes()) std::memcpy(out.data_ptr(), ins[0].data_ptr(), out.nbytes());
      return;
    }
    for (int q = 0; q < size_; ++q)  // rank q's share: everyone's inputs[q], reduced on q
      reduce_rounds(c, op, ins[q], static_cast<char*>(out.data_ptr()), q);
  });
}

WorkPtr ProcessGroupShm::do_barrier(const CallInfo& call) {
  return run(call, {}, true, [this, c = header(call)] {
    if (size_ > 1) exchange(c, nullptr, 0);
  });
}

WorkPtr ProcessGroupShm::do_send(const Tensor& tensor, int dst, int tag, const CallInfo& call) {
  Tensor t = tensor;
  return run(call, {t}, false, [this, t, dst, tag] {
    Channel& ch = layout_->channel(rank_, dst);
    char* buffer = layout_->buffer(rank_, dst);
    const char* data = static_cast<const char*>(t.data_ptr());
    const size_t total = t.nbytes();
    auto what = [&] {
      return "rank " + std::to_string(dst) + " to take the previous message (tag " + std::to_string(ch.tag) +
             ") out of the channel";
    };
    for_each_chunk(total, layout_->channel_bytes(), [&](size_t offset, size_t n) {
      const uint64_t posted = ch.posted;  // this rank is its only writer
      await([&] { return acquire_load(ch.taken) == posted; }, what);
      std::memcpy(buffer, data + offset, n);
      ch.tag = tag;
      ch.message_bytes = total;
      ch.chunk_bytes = n;
      release_store(ch.posted, posted + 1);
    });
  });
}

WorkPtr ProcessGroupShm::do_recv(Tensor& tensor, int src, int tag, const CallInfo& call) {
  Tensor t = tensor;
  return run(call, {t}, false, [this, t, src, tag] {
    Channel& ch = layout_->channel(src, rank_);
    const char* buffer = layout_->buffer(src, rank_);
    char* data = static_cast<char*>(t.data_ptr());
    const size_t total = t.nbytes();
    auto what = [&] { return "a message from rank " + std::to_string(src) + " (tag " + std::to_string(tag) + ")"; };
    size_t offset = 0;
    do {
      const uint64_t taken = ch.taken;  // this rank is its only writer
      await([&] { return acquire_load(ch.posted) > taken; }, what);
      GR_CHECK(ch.tag == tag && ch.message_bytes == total, "expected ", what(), " of ", total,
               " bytes, but the next message from rank ", src, " has tag ", ch.tag, " and ", ch.message_bytes,
               " bytes (the shm backend delivers the messages between two ranks in the order they were sent)");
      std::memcpy(data + offset, buffer, ch.chunk_bytes);
      offset += ch.chunk_bytes;
      release_store(ch.taken, taken + 1);
    } while (offset < total);
  });
}

// The "shm" backend.
static const bool kRegistered = [] {
  register_backend("shm", [](const BackendContext& ctx) -> ProcessGroupPtr {
    if (ctx.rank < 0) return nullptr;  // not a member of this new_group
    ShmOptions o;
    o.chunk_bytes = ProcessGroupShm::parse_chunk_kb(std::getenv("GRADRING_SHM_CHUNK_KB"));
    o.timeout = ctx.timeout;
    return std::make_shared<ProcessGroupShm>(ctx.store, ctx.rank, ctx.size, o);
  });
  return true;
}();

}  // namespace gr::distributed
