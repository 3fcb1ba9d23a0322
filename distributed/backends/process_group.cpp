// The collective front every backend shares: argument checks, names and sequence numbers,
// ReduceOp::Avg for backends without it. See Note [The collective front].
#include "distributed/backends/process_group.h"

#include <sstream>

#include "core/error.h"
#include "core/native/elementwise/elementwise.h"

namespace gr::distributed {

// Note [The collective front]
// A public collective (allreduce, ...) checks its arguments against the backend's
// placement(), so that a bad call fails at once on the calling rank, before anything is
// sent; numbers the collective (0, 1, 2, ... in issue order: the same on every rank that
// issues the same collectives) and names it ("gloo allreduce (sum) float32 [1000] #17 on
// rank 0", the name of its Work and of its errors); and hands the backend a CallInfo with
// what it needs. The DETAIL checker (DebugProcessGroup) is such a backend: it compares the
// CallInfo across ranks before it passes the call on. A backend without ReduceOp::Avg
// (reduces_avg() false: Gloo, shm, MPI) is asked for a Sum, and the front divides by the
// group size when the collective finishes (Work::then: before anyone's wait() returns, on
// the rank that holds the result). Point-to-point operations are checked (a message to
// oneself refused where the backend cannot deliver it) and named too, but take no sequence
// number: ranks send and receive different numbers of messages.

namespace {

bool carried(ScalarType d) {
  return d == kFloat32 || d == kFloat64 || d == kInt64 || d == kBFloat16 || d == kFloat16 || d == kUInt8;
}

}  // namespace

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Avg: return "avg";
    case ReduceOp::Min: return "min";
    case ReduceOp::Max: return "max";
    case ReduceOp::Product: return "prod";
  }
  return "?";
}

const char* op_type_name(OpType op) {
  switch (op) {
    case OpType::Allreduce: return "allreduce";
    case OpType::Broadcast: return "broadcast";
    case OpType::Allgather: return "allgather";
    case OpType::ReduceScatter: return "reduce_scatter";
    case OpType::Reduce: return "reduce";
    case OpType::Barrier: return "barrier";
    case OpType::Send: return "send";
    case OpType::Recv: return "recv";
  }
  return "an unknown collective";
}

std::ostream& operator<<(std::ostream& out, const CheckContext& c) {
  return out << c.backend << " " << c.op << " on rank " << c.rank;
}

void check_tensor(const Tensor& t, const CheckContext& c) {
  GR_CHECK(t.defined(), c, ": tensor is undefined");
  const std::optional<DeviceType> type = c.placement.type;
  GR_CHECK(type != kCUDA || t.is_cuda(), c, ": tensors must be CUDA tensors, got a ", t.device(),
           " tensor (move it with .to(Device(kCUDA, i)), or use the gloo backend for CPU tensors)");
  GR_CHECK(type != kCPU || t.is_cpu(), c, ": this backend moves CPU tensors, got one on ", t.device(),
           " (use the nccl backend for CUDA tensors, or copy it to the CPU first)");
  GR_CHECK(c.placement.index < 0 || t.device().index() == c.placement.index, c, ": tensor is on ", t.device(),
           " but this process group uses ", Device(type.value_or(kCUDA), c.placement.index),
           " (one device per group and process)");
  GR_CHECK(t.is_contiguous(), c, ": tensors must be contiguous, got sizes ", t.sizes(), " strides ", t.strides());
  GR_CHECK(carried(t.scalar_type()), c, ": dtype ", t.scalar_type(),
           " is not supported (float32, float64, int64, uint8, bfloat16, float16 are)");
}

void check_tensors(const std::vector<Tensor>& ts, const CheckContext& c) {
  GR_CHECK(!ts.empty(), c, ": the tensor list is empty");
  check_tensor(ts[0], c);
  CheckContext same_device = c;
  same_device.placement.index = ts[0].device().index();
  for (size_t i = 1; i < ts.size(); ++i) check_tensor(ts[i], same_device);
}

void check_per_rank_tensors(const std::vector<Tensor>& list, const Tensor& like, const CheckContext& c,
                            const char* role, const char* like_name) {
  GR_CHECK(static_cast<int>(list.size()) == c.size, c, ": expected ", c.size, " ", role, " tensors, got ", list.size());
  CheckContext same_device = c;
  same_device.placement.index = like.device().index();
  for (const Tensor& t : list) {
    check_tensor(t, same_device);
    GR_CHECK(t.sizes() == like.sizes() && t.scalar_type() == like.scalar_type(), c, ": every ", role, " must have ",
             like_name, " shape ", like.sizes(), " and dtype ", like.scalar_type(), ", got ", t.scalar_type(), " ",
             t.sizes());
  }
}

void check_rank(int r, const char* what, const CheckContext& c) {
  GR_CHECK(r >= 0 && r < c.size, c, ": ", what, " ", r, " is not a rank of this group (size ", c.size, ")");
}

void check_reduce_op(ReduceOp op, ScalarType t, const CheckContext& c) {
  GR_CHECK(op != ReduceOp::Avg || is_floating_point(t), c, ": avg needs a floating point tensor, got ", t);
}

ProcessGroup::ProcessGroup(int rank, int size) : rank_(rank), size_(size) {
  GR_CHECK(size >= 1, "ProcessGroup: size must be at least 1, got ", size);
  GR_CHECK(rank >= 0 && rank < size, "ProcessGroup: rank ", rank, " is not in [0, ", size, ")");
  if (const size_t capacity = FlightRecorder::configured_capacity())
    flight_ = std::make_shared<FlightRecorder>(capacity, "", rank, size);
}

void ProcessGroup::set_group_name(std::string name, std::vector<int> ranks) {
  if (flight_) flight_->set_group(std::move(name), std::move(ranks), backend_name());
}

void ProcessGroup::record(CallInfo& call, int peer, int tag) {
  if (!flight_) return;
  // backend_name() is virtual, so not known in the constructor: taken at the first call.
  if (!flight_backend_known_.load(std::memory_order_relaxed)) {
    flight_->set_backend(backend_name());
    flight_backend_known_.store(true, std::memory_order_relaxed);
  }
  call.flight = {flight_, flight_->record(call, peer, tag)};
}

std::string ProcessGroup::describe(std::string_view op, const Tensor& t, std::string_view detail, uint64_t* sequence) {
  std::ostringstream out;
  out << backend_name() << " " << op;
  if (!detail.empty()) out << " (" << detail << ")";
  if (t.defined()) out << " " << t.scalar_type() << " " << t.sizes();
  if (sequence) {
    *sequence = sequence_.fetch_add(1);
    out << " #" << *sequence;
  }
  out << " on rank " << rank_;
  return out.str();
}

CallInfo ProcessGroup::collective(OpType type, const Tensor& t, std::optional<ReduceOp> op, int root,
                                  int64_t tensors, std::string_view name) {
  CallInfo call;
  call.type = type;
  call.reduce_op = op;
  call.root = root;
  call.tensors = tensors;
  call.tensor = t;
  call.description = describe(name.empty() ? op_type_name(type) : name, t, op ? reduce_op_name(*op) : "",
                              &call.sequence);
  record(call, -1, -1);
  return call;
}

WorkPtr ProcessGroup::finish_avg(WorkPtr work, ReduceOp op, const Tensor& t, bool divide_here) const {
  if (op != ReduceOp::Avg || reduces_avg() || !divide_here || size_ == 1) return work;
  work->then([t, n = size_] { native::div_(t, native::wrapped_scalar(t, static_cast<double>(n))); });
  return work;
}

WorkPtr ProcessGroup::allreduce(Tensor& tensor, ReduceOp op) {
  const CheckContext c = check_context("allreduce");
  check_tensor(tensor, c);
  check_reduce_op(op, tensor.scalar_type(), c);
  const CallInfo call = collective(OpType::Allreduce, tensor, op, -1, 1);
  return finish_avg(do_allreduce(tensor, backend_op(op), call), op, tensor, true);
}

WorkPtr ProcessGroup::broadcast(Tensor& tensor, int root) {
  const CheckContext c = check_context("broadcast");
  check_tensor(tensor, c);
  check_rank(root, "root", c);
  return do_broadcast(tensor, root, collective(OpType::Broadcast, tensor, std::nullopt, root, 1));
}

WorkPtr ProcessGroup::allgather(std::vector<Tensor>& outputs, const Tensor& input) {
  const CheckContext c = check_context("allgather");
  check_tensor(input, c);
  check_per_rank_tensors(outputs, input, c, "output", "the input's");
  const CallInfo call = collective(OpType::Allgather, input, std::nullopt, -1, static_cast<int64_t>(outputs.size()));
  return do_allgather(outputs, input, call);
}

WorkPtr ProcessGroup::reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op) {
  const CheckContext c = check_context("reduce_scatter");
  check_tensor(output, c);
  check_reduce_op(op, output.scalar_type(), c);
  check_per_rank_tensors(inputs, output, c, "input", "the output's");
  const CallInfo call = collective(OpType::ReduceScatter, output, op, -1, static_cast<int64_t>(inputs.size()));
  return finish_avg(do_reduce_scatter(output, inputs, backend_op(op), call), op, output, true);
}

WorkPtr ProcessGroup::reduce(Tensor& tensor, int root, ReduceOp op) {
  const CheckContext c = check_context("reduce");
  check_tensor(tensor, c);
  check_rank(root, "root", c);
  check_reduce_op(op, tensor.scalar_type(), c);
  const CallInfo call = collective(OpType::Reduce, tensor, op, root, 1);
  return finish_avg(do_reduce(tensor, root, backend_op(op), call), op, tensor, rank_ == root);
}

WorkPtr ProcessGroup::barrier() { return do_barrier(collective(OpType::Barrier, Tensor(), std::nullopt, -1, 0)); }

CallInfo ProcessGroup::point_to_point(OpType type, const Tensor& t, int peer, int tag) {
  const bool send = type == OpType::Send;
  const CheckContext c = check_context(op_type_name(type));
  check_tensor(t, c);
  check_rank(peer, send ? "destination" : "source", c);
  GR_CHECK(peer != rank_ || sends_to_self(), c,
           send ? ": a rank cannot send to itself" : ": a rank cannot receive from itself");
  CallInfo call;
  call.type = type;
  call.tensor = t;
  call.tensors = 1;
  const std::string peer_and_tag = detail::str_cat(send ? "to rank " : "from rank ", peer, ", tag ", tag);
  call.description = describe(op_type_name(type), t, peer_and_tag, nullptr);
  record(call, peer, tag);
  return call;
}

WorkPtr ProcessGroup::send(const Tensor& tensor, int dst, int tag) {
  return do_send(tensor, dst, tag, point_to_point(OpType::Send, tensor, dst, tag));
}

WorkPtr ProcessGroup::recv(Tensor& tensor, int src, int tag) {
  return do_recv(tensor, src, tag, point_to_point(OpType::Recv, tensor, src, tag));
}

void wait_for(const WorkPtr& work, const ProcessGroup& group, std::string_view who, std::string_view what) {
  try {
    work->wait(group.timeout());
  } catch (const gr::Error& e) {
    GR_ERROR(who, " on rank ", group.rank(), " of ", group.size(), ": ", what, " failed: ", e.message());
  }
}

}  // namespace gr::distributed
