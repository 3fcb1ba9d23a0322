// GRADRING_DISTRIBUTED_DEBUG parsing and DebugProcessGroup: each collective's fingerprint is
// all-gathered and compared across ranks before the collective is issued.
#include "distributed/backends/process_group_debug.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <sstream>

#include "core/error.h"
#include "core/factory.h"
#include "distributed/store/rank_list.h"

namespace gr::distributed {

namespace {

// One collective call, as int64 words; the same layout on every rank.
constexpr int64_t kMagic = 0x6772646562756701;  // "grdebug" + layout version 1
constexpr int kMaxDims = 8;
enum Field : int { kMagicF, kSeq, kOp, kReduceOp, kDtype, kNumel, kNdim, kSizes, kRoot = kSizes + kMaxDims, kTensors,
                   kFields };
using Fingerprint = std::array<int64_t, kFields>;

// "allreduce(sum) float32 [1000]", "broadcast(root=1) int64 [2, 3]", "allgather float32 [4]
// into 2 tensors"; with_seq adds " as collective #12".
std::string call_text(const Fingerprint& f, bool with_seq) {
  if (f[kMagicF] != kMagic)
    return "something else (no DETAIL fingerprint: is GRADRING_DISTRIBUTED_DEBUG=DETAIL set on every rank?)";
  std::ostringstream out;
  out << op_type_name(static_cast<OpType>(f[kOp]));
  std::vector<std::string> args;
  if (f[kReduceOp] >= 0) args.push_back(reduce_op_name(static_cast<ReduceOp>(f[kReduceOp])));
  if (f[kRoot] >= 0) args.push_back("root=" + std::to_string(f[kRoot]));
  for (size_t i = 0; i < args.size(); ++i) out << (i ? ", " : "(") << args[i];
  if (!args.empty()) out << ")";
  if (f[kDtype] >= 0) {
    out << " " << dtype_name(static_cast<ScalarType>(f[kDtype])) << " [";
    for (int64_t d = 0; d < std::min<int64_t>(f[kNdim], kMaxDims); ++d) out << (d ? ", " : "") << f[kSizes + d];
    if (f[kNdim] > kMaxDims) out << ", ... (" << f[kNdim] << " dims, " << f[kNumel] << " elements)";
    out << "]";
  }
  const auto op = static_cast<OpType>(f[kOp]);
  if (op == OpType::Allgather) out << " into " << f[kTensors] << " tensors";
  if (op == OpType::ReduceScatter) out << " from " << f[kTensors] << " tensors";
  if (with_seq) out << " as collective #" << f[kSeq];
  return out.str();
}

}  // namespace

DebugLevel debug_level() {
  const char* v = std::getenv("GRADRING_DISTRIBUTED_DEBUG");
  if (!v || !*v) return DebugLevel::Off;
  std::string s(v);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (s == "OFF") return DebugLevel::Off;
  if (s == "INFO") return DebugLevel::Info;
  if (s == "DETAIL") return DebugLevel::Detail;
  GR_ERROR("GRADRING_DISTRIBUTED_DEBUG='", v, "' is not a debug level: use OFF, INFO or DETAIL (case-insensitive)");
}

const char* debug_level_name(DebugLevel level) {
  switch (level) {
    case DebugLevel::Off: return "OFF";
    case DebugLevel::Info: return "INFO";
    case DebugLevel::Detail: return "DETAIL";
  }
  return "?";
}

DebugProcessGroup::DebugProcessGroup(ProcessGroupPtr inner, ProcessGroupPtr checker)
    : ProcessGroup(inner ? inner->rank() : 0, inner ? inner->size() : 1),
      inner_(std::move(inner)),
      checker_(checker ? std::move(checker) : inner_) {
  GR_CHECK(inner_ != nullptr, "DebugProcessGroup: no group to wrap");
  disable_flight_recorder();  // the wrapped group records every call (and the checker its checks)
  GR_CHECK(checker_->rank() == rank_ && checker_->size() == size_, "DebugProcessGroup: the checking group (rank ",
           checker_->rank(), " of ", checker_->size(), ") must match the wrapped one (rank ", rank_, " of ", size_,
           ")");
  timeout_ = inner_->timeout();
}

// ProcessGroup::set_timeout is not virtual: a new timeout on this wrapper reaches the
// wrapped groups at their next collective.
void DebugProcessGroup::sync_timeout() {
  if (inner_->timeout() != timeout_) inner_->set_timeout(timeout_);
  if (checker_->timeout() != timeout_) checker_->set_timeout(timeout_);
}

void DebugProcessGroup::check(const CallInfo& call) {
  sync_timeout();
  const Tensor& t = call.tensor;
  Fingerprint mine;
  mine.fill(0);
  mine[kMagicF] = kMagic;
  mine[kSeq] = static_cast<int64_t>(call.sequence);
  mine[kOp] = static_cast<int64_t>(call.type);
  mine[kReduceOp] = call.reduce_op ? static_cast<int64_t>(*call.reduce_op) : -1;
  mine[kDtype] = t.defined() ? static_cast<int64_t>(t.scalar_type()) : -1;
  mine[kNumel] = t.defined() ? t.numel() : -1;
  mine[kNdim] = t.defined() ? t.dim() : -1;
  for (int64_t d = 0; t.defined() && d < std::min<int64_t>(t.dim(), kMaxDims); ++d) mine[kSizes + d] = t.sizes()[d];
  mine[kRoot] = call.root;
  mine[kTensors] = call.tensors;

  std::vector<Tensor> all;
  for (int r = 0; r < size_; ++r) all.push_back(empty({kFields}, kInt64));
  Tensor input = empty({kFields}, kInt64);
  std::copy(mine.begin(), mine.end(), input.data_ptr<int64_t>());
  try {
    checker_->allgather(all, input)->wait(timeout_);
  } catch (const gr::Error& e) {
    GR_ERROR("GRADRING_DISTRIBUTED_DEBUG=DETAIL: rank ", rank_, " could not check collective #", mine[kSeq], " (",
             call_text(mine, false), ") with the other ranks; did one of them stop or issue fewer collectives? ",
             e.message());
  }

  // Ranks grouped by identical call, in order of the first rank of each group.
  std::vector<Fingerprint> calls;
  std::vector<std::vector<int>> ranks;
  for (int r = 0; r < size_; ++r) {
    Fingerprint f;
    std::copy_n(all[r].data_ptr<int64_t>(), kFields, f.begin());
    auto it = std::find(calls.begin(), calls.end(), f);
    if (it == calls.end()) {
      calls.push_back(f);
      ranks.push_back({r});
    } else {
      ranks[it - calls.begin()].push_back(r);
    }
  }
  if (calls.size() == 1) return;
  bool seq_differs = std::any_of(calls.begin(), calls.end(), [&](const Fingerprint& f) { return f[kSeq] != mine[kSeq]; });
  std::ostringstream out;
  out << "GRADRING_DISTRIBUTED_DEBUG=DETAIL: collective #" << mine[kSeq] << " differs across ranks: ";
  constexpr size_t kShown = 8;
  for (size_t i = 0; i < std::min(calls.size(), kShown); ++i)
    out << (i ? ", " : "") << rank_list(ranks[i]) << " called " << call_text(calls[i], seq_differs);
  if (calls.size() > kShown) out << ", and " << calls.size() - kShown << " more different calls";
  record_refused(call, out.str());
  GR_ERROR(out.str());
}

// Note [Refused calls in the flight record]
// A call the check refuses is never issued, so the wrapped group's flight record (which
// holds the checks' all-gathers and the calls issued after them) would be the same on every
// rank, and gradring-flight could not say who diverged. So the refused call enters it as a
// failed collective (the next sequence number of the wrapped group, the same on every rank:
// they all refuse at the same check), which also writes the dumps. This is what makes the
// mismatch scenarios diagnosable on MPI, where a collective whose counts differ across ranks
// is erroneous and must not be issued at all (tests/distributed/flight/test_flight.sh).
void DebugProcessGroup::record_refused(const CallInfo& call, const std::string& why) {
  const CallInfo refused = inner_->collective(call.type, call.tensor, call.reduce_op, call.root, call.tensors);
  if (refused.flight) refused.flight.finished(/*failed=*/true, refused.description + " refused: " + why);
}

template <class Issue>
WorkPtr DebugProcessGroup::checked(const CallInfo& call, Issue&& issue) {
  std::lock_guard lock(mutex_);
  check(call);
  return issue();
}

WorkPtr DebugProcessGroup::do_allreduce(Tensor& tensor, ReduceOp op, const CallInfo& call) {
  return checked(call, [&] { return inner_->allreduce(tensor, op); });
}

WorkPtr DebugProcessGroup::do_broadcast(Tensor& tensor, int root, const CallInfo& call) {
  return checked(call, [&] { return inner_->broadcast(tensor, root); });
}

WorkPtr DebugProcessGroup::do_allgather(std::vector<Tensor>& outputs, const Tensor& input, const CallInfo& call) {
  return checked(call, [&] { return inner_->allgather(outputs, input); });
}

WorkPtr DebugProcessGroup::do_reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op,
                                             const CallInfo& call) {
  return checked(call, [&] { return inner_->reduce_scatter(output, inputs, op); });
}

WorkPtr DebugProcessGroup::do_reduce(Tensor& tensor, int root, ReduceOp op, const CallInfo& call) {
  return checked(call, [&] { return inner_->reduce(tensor, root, op); });
}

WorkPtr DebugProcessGroup::do_barrier(const CallInfo& call) {
  return checked(call, [&] { return inner_->barrier(); });
}

// Point to point passes through unchecked: ranks send and receive different messages.
WorkPtr DebugProcessGroup::do_send(const Tensor& tensor, int dst, int tag, const CallInfo&) {
  sync_timeout();
  return inner_->send(tensor, dst, tag);
}

WorkPtr DebugProcessGroup::do_recv(Tensor& tensor, int src, int tag, const CallInfo&) {
  sync_timeout();
  return inner_->recv(tensor, src, tag);
}

ProcessGroupPtr wrap_for_debug(ProcessGroupPtr group) {
  if (!group || debug_level() != DebugLevel::Detail) return group;
  return std::make_shared<DebugProcessGroup>(std::move(group));
}

}  // namespace gr::distributed
