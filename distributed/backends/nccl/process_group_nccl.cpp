// ProcessGroupNCCL: the communicator and stream set-up, one NCCL call per collective issued
// on the communication stream, and the "nccl" backend registration.
#include "distributed/backends/nccl/process_group_nccl.h"

#include <cstdlib>

#include "core/error.h"
#include "core/factory.h"
#include "core/version.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/runtime.h"
#include "distributed/backends/init.h"
#include "distributed/backends/nccl/nccl_comm.h"
#include "distributed/backends/nccl/nccl_utils.h"
#include "distributed/backends/nccl/nccl_watchdog.h"
#include "distributed/backends/nccl/nccl_work.h"

namespace gr::distributed {

namespace {

// Where rank 0 leaves the NCCL unique id, inside the group's store namespace.
constexpr const char* kUniqueIdKey = "nccl/unique_id";
// How long the destructor waits for collectives still in flight before aborting them.
constexpr std::chrono::milliseconds kDrainLimit{60000};

size_t count_of(const Tensor& t) { return static_cast<size_t>(t.numel()); }

// Whether tensors[r] (r = 0..n-1, equal byte sizes) lie back to back from tensors[0], so a
// collective can use them as one buffer without copies.
bool back_to_back(const std::vector<Tensor>& ts) {
  const char* base = static_cast<const char*>(ts[0].data_ptr());
  for (size_t r = 0; r < ts.size(); ++r)
    if (static_cast<const char*>(ts[r].data_ptr()) != base + r * ts[0].nbytes()) return false;
  return true;
}

const char* visible_devices() {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  return v ? v : "(not set)";
}

}  // namespace

ProcessGroupNCCL::ProcessGroupNCCL(std::shared_ptr<Store> store, int rank, int size, const NCCLOptions& options)
    : ProcessGroup(rank, size), store_(std::move(store)) {
  GR_CHECK(store_ != nullptr, "nccl: a store is needed for the rendezvous (rank 0's NCCL unique id)");
  timeout_ = options.timeout;
  const int devices = cuda_device_count();
  GR_CHECK(devices > 0, "nccl: rank ", rank, " of ", size,
           " sees no CUDA device (CUDA_VISIBLE_DEVICES=", visible_devices(),
           "); the nccl backend needs one GPU per process. Use the gloo backend for CPU tensors.");
  GR_CHECK(options.device_id < devices, "nccl: device_id ", options.device_id, " is not a CUDA device (", devices,
           " visible)");
  health_ = std::make_shared<nccl::Health>();
  watchdog_ = std::make_shared<nccl::Watchdog>(rank, size, health_);
  if (options.device_id >= 0) {
    std::lock_guard lock(mutex_);
    ensure_comm(options.device_id);
  }
}

ProcessGroupNCCL::~ProcessGroupNCCL() {
  if (!comm_) {
    watchdog_->stop();
    return;
  }
  // At process exit the CUDA runtime may already be unloading: touch nothing then.
  const cudaError_t probe = cudaStreamQuery(stream_.handle());
  // Collectives still queued answer cudaErrorNotReady, which the runtime also keeps as the
  // thread's last error: clear it, or the next GR_CUDA_CHECK_LAUNCH would report it.
  if (probe != cudaSuccess) (void)cudaGetLastError();
  if (probe == cudaErrorCudartUnloading || probe == cudaErrorContextIsDestroyed) {
    watchdog_->stop();
    comm_->leak();
    return;
  }
  const bool drained = watchdog_->drain(std::min(timeout_, kDrainLimit));
  if (!drained)
    watchdog_->fail(detail::str_cat("nccl on rank ", rank_, " of ", size_,
                                    ": the process group was destroyed with collectives still in flight"));
  watchdog_->stop();
  comm_.reset();  // finalize and destroy (or nothing after an abort); the pool stream stays
}

int ProcessGroupNCCL::device() const {
  std::lock_guard lock(mutex_);
  return device_;
}

size_t ProcessGroupNCCL::in_flight() const { return watchdog_->in_flight(); }

cuda::Stream ProcessGroupNCCL::stream() const {
  std::lock_guard lock(mutex_);
  return stream_;
}

void ProcessGroupNCCL::ensure_comm(int device) {
  if (comm_) {
    GR_CHECK(device == device_, "nccl on rank ", rank_, ": this group uses cuda:", device_, ", not cuda:", device);
    return;
  }
  const int devices = cuda_device_count();
  GR_CHECK(device >= 0 && device < devices, "nccl on rank ", rank_, ": no CUDA device ", device, " (", devices,
           " visible)");
  cuda::DeviceGuard guard(device);
  std::shared_ptr<nccl::Comm> comm;
  try {
    comm = std::make_shared<nccl::Comm>(*store_, kUniqueIdKey, rank_, size_, device, timeout_);
  } catch (const gr::Error& e) {
    // The unique id is spent and the peers may be half-way through their init: no retry.
    health_->fail(e.message());
    throw;
  }
  // Communication gets the highest priority, so it is not starved by the compute kernels it
  // overlaps with. A pool stream: never destroyed, so the caching allocator's per-stream
  // pools can never see its handle reused by another stream.
  stream_ = cuda::Stream::create(device, cuda::Stream::priority_range(device).second);
  barrier_buffer_ = zeros({1}, TensorOptions(kFloat32).device(Device(kCUDA, device)));
  comm_ = std::move(comm);
  device_ = device;
  watchdog_->start(comm_, device_);
}

WorkPtr ProcessGroupNCCL::issue(const CallInfo& call, int device, std::vector<Tensor> outputs,
                                std::vector<Tensor> keep_alive, const Body& body, bool blocking_wait) {
  const std::string& description = call.description;
  std::unique_lock lock(mutex_);
  health_->throw_if_failed(description);
  if (device < 0) device = device_ >= 0 ? device_ : cuda::current_device();
  ensure_comm(device);
  comm_->set_timeout(timeout_);
  cuda::DeviceGuard guard(device_);
  auto work =
      std::make_shared<nccl::NCCLWork>(description, device_, blocking_wait, timeout_, health_, watchdog_, call.flight);
  work->set_result(outputs);
  keep_alive.insert(keep_alive.end(), outputs.begin(), outputs.end());
  // Everything the caller queued so far (e.g. the kernels producing the inputs) runs first.
  ready_.record(cuda::Stream::current(device_));
  stream_.wait(ready_);
  try {
    body(stream_.handle(), keep_alive);
  } catch (const gr::Error& e) {
    // A failed NCCL call leaves the communicator unusable (and peers possibly waiting in
    // the same collective): fail the group, which aborts it, outside the lock (failing runs
    // the works' callbacks, which may call into this group).
    lock.unlock();
    work->record_failed(e.message());
    watchdog_->fail(detail::str_cat(description, ": ", e.message()));
    throw;
  }
  work->record_enqueued();
  work->end_event().record(stream_);
  watchdog_->add(work, std::move(keep_alive));
  return work;
}

WorkPtr ProcessGroupNCCL::do_allreduce(Tensor& tensor, ReduceOp op, const CallInfo& call) {
  const ncclRedOp_t red = nccl::to_nccl(op, tensor.scalar_type(), "allreduce", rank_);
  Tensor t = tensor;
  return issue(call, device_of(t), {t}, {}, [&](cudaStream_t s, std::vector<Tensor>&) {
    if (t.numel() == 0) return;  // every rank has the same shape: nobody calls NCCL
    GR_NCCL_CALL(*comm_, ncclAllReduce(t.data_ptr(), t.data_ptr(), count_of(t), nccl::to_nccl(t.scalar_type()), red,
                                       comm_->get(), s));
  });
}

WorkPtr ProcessGroupNCCL::allreduce_coalesced(std::vector<Tensor>& tensors, ReduceOp op) {
  const CheckContext c = check_context("allreduce_coalesced");
  check_tensors(tensors, c);
  std::vector<ncclRedOp_t> reds;
  for (const Tensor& t : tensors) {
    check_reduce_op(op, t.scalar_type(), c);
    reds.push_back(nccl::to_nccl(op, t.scalar_type(), "allreduce_coalesced", rank_));
  }
  std::vector<Tensor> ts = tensors;
  const CallInfo call =
      collective(OpType::Allreduce, ts[0], op, -1, static_cast<int64_t>(ts.size()), "allreduce_coalesced");
  return issue(call, device_of(ts[0]), ts, {},
               [&](cudaStream_t s, std::vector<Tensor>&) {
                 // One group call: NCCL fuses the launches of the whole list.
                 GR_NCCL_CALL(*comm_, ncclGroupStart());
                 try {
                   for (size_t i = 0; i < ts.size(); ++i)
                     if (ts[i].numel() > 0)
                       GR_NCCL_CALL(*comm_,
                                    ncclAllReduce(ts[i].data_ptr(), ts[i].data_ptr(), count_of(ts[i]),
                                                  nccl::to_nccl(ts[i].scalar_type()), reds[i], comm_->get(), s));
                 } catch (...) {
                   ncclGroupEnd();  // close the group; the error above is the one to report
                   throw;
                 }
                 GR_NCCL_CALL(*comm_, ncclGroupEnd());
               });
}

WorkPtr ProcessGroupNCCL::do_broadcast(Tensor& tensor, int root, const CallInfo& call) {
  Tensor t = tensor;
  return issue(call, device_of(t), {t}, {}, [&](cudaStream_t s, std::vector<Tensor>&) {
    if (t.numel() == 0) return;
    GR_NCCL_CALL(*comm_, ncclBroadcast(t.data_ptr(), t.data_ptr(), count_of(t), nccl::to_nccl(t.scalar_type()), root,
                                       comm_->get(), s));
  });
}

WorkPtr ProcessGroupNCCL::do_reduce(Tensor& tensor, int root, ReduceOp op, const CallInfo& call) {
  const ncclRedOp_t red = nccl::to_nccl(op, tensor.scalar_type(), "reduce", rank_);
  Tensor t = tensor;
  return issue(call, device_of(t), {t}, {}, [&](cudaStream_t s, std::vector<Tensor>&) {
    if (t.numel() == 0) return;
    GR_NCCL_CALL(*comm_, ncclReduce(t.data_ptr(), t.data_ptr(), count_of(t), nccl::to_nccl(t.scalar_type()), red, root,
                                    comm_->get(), s));
  });
}

WorkPtr ProcessGroupNCCL::do_allgather(std::vector<Tensor>& outputs, const Tensor& input, const CallInfo& call) {
  std::vector<Tensor> outs = outputs;
  Tensor in = input;
  return issue(call, device_of(in), outs, {in}, [&](cudaStream_t s, std::vector<Tensor>& keep) {
    const size_t bytes = in.nbytes();
    if (bytes == 0) return;
    if (back_to_back(outs)) {  // e.g. views of one flat buffer: gather straight into it
      GR_NCCL_CALL(*comm_, ncclAllGather(in.data_ptr(), outs[0].data_ptr(), count_of(in),
                                         nccl::to_nccl(in.scalar_type()), comm_->get(), s));
      return;
    }
    Tensor flat = empty({static_cast<int64_t>(size_) * in.numel()}, in.options());
    keep.push_back(flat);
    GR_NCCL_CALL(*comm_, ncclAllGather(in.data_ptr(), flat.data_ptr(), count_of(in), nccl::to_nccl(in.scalar_type()),
                                       comm_->get(), s));
    const char* src = static_cast<const char*>(flat.data_ptr());
    for (int r = 0; r < size_; ++r)
      GR_CUDA_CHECK(cudaMemcpyAsync(outs[r].data_ptr(), src + r * bytes, bytes, cudaMemcpyDeviceToDevice, s));
  });
}

WorkPtr ProcessGroupNCCL::do_reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op,
                                            const CallInfo& call) {
  const ncclRedOp_t red = nccl::to_nccl(op, output.scalar_type(), "reduce_scatter", rank_);
  Tensor out = output;
  std::vector<Tensor> ins = inputs;
  return issue(call, device_of(out), {out}, ins, [&](cudaStream_t s, std::vector<Tensor>& keep) {
    const ncclDataType_t type = nccl::to_nccl(out.scalar_type());
    if (out.numel() == 0) return;
    if (back_to_back(ins)) {
      GR_NCCL_CALL(*comm_,
                   ncclReduceScatter(ins[0].data_ptr(), out.data_ptr(), count_of(out), type, red, comm_->get(), s));
      return;
    }
    const size_t bytes = out.nbytes();
    Tensor flat = empty({static_cast<int64_t>(size_) * out.numel()}, out.options());
    keep.push_back(flat);
    char* dst = static_cast<char*>(flat.data_ptr());
    for (int r = 0; r < size_; ++r)
      GR_CUDA_CHECK(cudaMemcpyAsync(dst + r * bytes, ins[r].data_ptr(), bytes, cudaMemcpyDeviceToDevice, s));
    GR_NCCL_CALL(*comm_, ncclReduceScatter(flat.data_ptr(), out.data_ptr(), count_of(out), type, red, comm_->get(), s));
  });
}

WorkPtr ProcessGroupNCCL::do_barrier(const CallInfo& call) {
  return issue(
      call, -1, {}, {},
      [&](cudaStream_t s, std::vector<Tensor>&) {
        GR_NCCL_CALL(*comm_, ncclAllReduce(barrier_buffer_.data_ptr(), barrier_buffer_.data_ptr(), 1, ncclFloat32,
                                           ncclSum, comm_->get(), s));
      },
      /*blocking_wait=*/true);
}

WorkPtr ProcessGroupNCCL::do_send(const Tensor& tensor, int dst, int tag, const CallInfo& call) {
  Tensor t = tensor;
  return issue(call, device_of(t), {}, {t}, [&](cudaStream_t s, std::vector<Tensor>&) {
    if (t.numel() == 0) return;
    GR_NCCL_CALL(*comm_, ncclSend(t.data_ptr(), count_of(t), nccl::to_nccl(t.scalar_type()), dst, comm_->get(), s));
  });
}

WorkPtr ProcessGroupNCCL::do_recv(Tensor& tensor, int src, int tag, const CallInfo& call) {
  Tensor t = tensor;
  return issue(call, device_of(t), {t}, {}, [&](cudaStream_t s, std::vector<Tensor>&) {
    if (t.numel() == 0) return;
    GR_NCCL_CALL(*comm_, ncclRecv(t.data_ptr(), count_of(t), nccl::to_nccl(t.scalar_type()), src, comm_->get(), s));
  });
}

// The "nccl" backend (CUDA builds with NCCL).
static const bool kRegistered = [] {
  register_backend("nccl", [](const BackendContext& ctx) -> ProcessGroupPtr {
    if (ctx.rank < 0) return nullptr;  // not a member of this new_group
    NCCLOptions o;
    o.timeout = ctx.timeout;
    return std::make_shared<ProcessGroupNCCL>(ctx.store, ctx.rank, ctx.size, o);
  });
  return true;
}();

}  // namespace gr::distributed
