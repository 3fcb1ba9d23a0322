// ProcessGroupMPI: each collective is issued as a non-blocking MPI call on the group's
// worker thread and completed with MPI_Test polling (bounded by the group's timeout).
#include "distributed/backends/mpi/process_group_mpi.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <cstdio>
#include <thread>

#include "distributed/backends/flat_buffer.h"
#include "distributed/backends/init.h"

namespace gr::distributed {

namespace {

#define GR_MPI_CHECK(call)                                                               \
  do {                                                                                   \
    int gr_mpi_rc = (call);                                                              \
    if (gr_mpi_rc != MPI_SUCCESS) {                                                      \
      char gr_mpi_text[MPI_MAX_ERROR_STRING];                                            \
      int gr_mpi_len = 0;                                                                \
      MPI_Error_string(gr_mpi_rc, gr_mpi_text, &gr_mpi_len);                             \
      GR_ERROR("MPI call failed: ", #call, ": ", std::string(gr_mpi_text, gr_mpi_len));  \
    }                                                                                    \
  } while (0)

// ---- bfloat16 / float16 reductions (MPI has no such types): user-defined ops ----

template <class T, class F>
void reduce_16bit(void* in, void* inout, int* len, F f) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = T(f(static_cast<float>(a[i]), static_cast<float>(b[i])));
}
template <class T>
void sum16(void* in, void* io, int* n, MPI_Datatype*) { reduce_16bit<T>(in, io, n, [](float a, float b) { return a + b; }); }
template <class T>
void prod16(void* in, void* io, int* n, MPI_Datatype*) { reduce_16bit<T>(in, io, n, [](float a, float b) { return a * b; }); }
template <class T>
void min16(void* in, void* io, int* n, MPI_Datatype*) { reduce_16bit<T>(in, io, n, [](float a, float b) { return a < b ? a : b; }); }
template <class T>
void max16(void* in, void* io, int* n, MPI_Datatype*) { reduce_16bit<T>(in, io, n, [](float a, float b) { return a > b ? a : b; }); }

struct SixteenBitOps {
  MPI_Op ops[2][4];  // [bf16, f16][sum, prod, min, max]
};

const SixteenBitOps& sixteen_bit_ops() {
  static SixteenBitOps o = [] {
    SixteenBitOps s{};
    MPI_User_function* fns[2][4] = {{sum16<BFloat16>, prod16<BFloat16>, min16<BFloat16>, max16<BFloat16>},
                                    {sum16<Half>, prod16<Half>, min16<Half>, max16<Half>}};
    for (int t = 0; t < 2; ++t)
      for (int k = 0; k < 4; ++k) MPI_Op_create(fns[t][k], /*commute=*/1, &s.ops[t][k]);
    return s;
  }();
  return o;
}

MPI_Datatype mpi_type(ScalarType t) {
  switch (t) {
    case kFloat32: return MPI_FLOAT;
    case kFloat64: return MPI_DOUBLE;
    case kInt64: return MPI_INT64_T;
    case kUInt8: return MPI_UINT8_T;
    case kBFloat16:
    case kFloat16: return MPI_UINT16_T;  // carried as 16-bit words; reduced by the ops above
    default: GR_ERROR("mpi: dtype ", t, " is not supported");
  }
}

MPI_Op mpi_op(ReduceOp op, ScalarType t) {
  if (is_reduced_float(t)) {
    int which = t == kBFloat16 ? 0 : 1;
    switch (op) {
      case ReduceOp::Sum:
      case ReduceOp::Avg: return sixteen_bit_ops().ops[which][0];
      case ReduceOp::Product: return sixteen_bit_ops().ops[which][1];
      case ReduceOp::Min: return sixteen_bit_ops().ops[which][2];
      case ReduceOp::Max: return sixteen_bit_ops().ops[which][3];
    }
  }
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: return MPI_SUM;
    case ReduceOp::Product: return MPI_PROD;
    case ReduceOp::Min: return MPI_MIN;
    case ReduceOp::Max: return MPI_MAX;
  }
  return MPI_SUM;
}

int count_of(const Tensor& t) {
  GR_CHECK(t.numel() <= INT32_MAX, "mpi: tensors of more than 2^31-1 elements are not supported (got ", t.numel(), ")");
  return static_cast<int>(t.numel());
}

// Completes `request`, polling MPI_Test so a stuck peer turns into a timeout error.
void complete(MPI_Request& request, std::chrono::milliseconds timeout, const char* what) {
  auto start = std::chrono::steady_clock::now();
  int done = 0;
  for (int spins = 0;; ++spins) {
    GR_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done) return;
    if (spins > 2000) std::this_thread::sleep_for(std::chrono::microseconds(50));
    if (timeout.count() > 0 && std::chrono::steady_clock::now() - start > timeout)
      GR_ERROR("mpi ", what, ": no progress for ", timeout.count(),
               " ms (a peer died or issued different collectives); this group cannot be used any more");
  }
}

bool g_we_initialized = false;

// See ProcessGroupMPI::watch.
constexpr std::chrono::milliseconds kFlightDumpGrace{1000};

void finalize_at_exit() {
  destroy_process_group();  // stops the default group's worker before MPI goes away
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void ensure_initialized() {
  static std::once_flag once;
  std::call_once(once, [] {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      GR_MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided));
      GR_CHECK(provided >= MPI_THREAD_SERIALIZED, "mpi: the MPI library offers thread level ", provided,
               "; gradring needs MPI_THREAD_SERIALIZED or better");
      g_we_initialized = true;
      std::atexit(finalize_at_exit);
    }
  });
}

}  // namespace

ProcessGroupMPI::ProcessGroupMPI(MPI_Comm comm) : QueuedProcessGroup([&] {
      int r = 0;
      MPI_Comm_rank(comm, &r);
      return r;
    }(), [&] {
      int s = 0;
      MPI_Comm_size(comm, &s);
      return s;
    }()), comm_(comm) {
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);  // errors become gr::Error, not aborts
  watchdog_ = std::thread([this] { watch(); });
}

ProcessGroupMPI::~ProcessGroupMPI() {
  shutdown();
  {
    std::lock_guard lock(watch_mutex_);
    watch_stop_ = true;
  }
  watch_cv_.notify_all();
  watchdog_.join();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_WORLD) MPI_Comm_free(&comm_);
}

template <class F>
void ProcessGroupMPI::blocking(F&& call, const char* what) {
  {
    std::lock_guard lock(watch_mutex_);
    blocking_what_ = what;
    blocking_since_ = std::chrono::steady_clock::now();
  }
  try {
    call();
  } catch (...) {
    std::lock_guard lock(watch_mutex_);
    blocking_what_ = nullptr;
    throw;
  }
  std::lock_guard lock(watch_mutex_);
  blocking_what_ = nullptr;
}

// A blocking MPI call cannot be given up on: past the group's timeout the job is stuck for
// good (a dead peer, or ranks issuing different collectives), so say which call and abort
// every process of the job, as torch's NCCL watchdog does, instead of hanging.
void ProcessGroupMPI::watch() {
  std::unique_lock lock(watch_mutex_);
  while (!watch_stop_) {
    watch_cv_.wait_for(lock, std::chrono::milliseconds(200));
    if (!blocking_what_ || timeout_.count() <= 0) continue;
    const auto stuck = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                              blocking_since_);
    if (stuck <= timeout_) continue;
    std::fprintf(stderr,
                 "gradring: mpi %s on rank %d of %d: no progress for %lld ms (a peer died or issued different "
                 "collectives); aborting the job (MPI_Abort)\n",
                 blocking_what_, rank_, size_, static_cast<long long>(stuck.count()));
    std::fflush(stderr);
    if (flight_recorder_dumps_enabled()) {
      dump_flight_recorder_after_failure(detail::str_cat("mpi watchdog: ", blocking_what_, " on rank ", rank_,
                                                         ": no progress for ", stuck.count(), " ms"));
      // MPI_Abort kills every rank at once: the others' watchdogs, a poll later, get
      // kFlightDumpGrace to write their dumps too.
      std::fprintf(stderr, "gradring: mpi on rank %d: aborting in %lld ms (time for the other ranks' flight recorder dumps)\n",
                   rank_, static_cast<long long>(kFlightDumpGrace.count()));
      watch_cv_.wait_for(lock, kFlightDumpGrace);
    }
    MPI_Abort(comm_, 1);
  }
}

std::shared_ptr<ProcessGroupMPI> ProcessGroupMPI::create(const std::vector<int>& members) {
  ensure_initialized();
  if (members.empty()) return std::make_shared<ProcessGroupMPI>(MPI_COMM_WORLD);
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  auto me = std::find(members.begin(), members.end(), world_rank);
  MPI_Comm comm = MPI_COMM_NULL;
  GR_MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, me == members.end() ? MPI_UNDEFINED : 0,
                              static_cast<int>(me - members.begin()), &comm));
  if (comm == MPI_COMM_NULL) return nullptr;
  return std::make_shared<ProcessGroupMPI>(comm);
}

WorkPtr ProcessGroupMPI::do_allreduce(Tensor& tensor, ReduceOp op, const CallInfo& call) {
  Tensor t = tensor;
  return enqueue(call, {t}, [this, t, op] {
    // The blocking MPI_Allreduce: Open MPI's tuned algorithms and shared-memory single copy
    // (about 2.5x the bandwidth of MPI_Iallreduce, whose libnbc schedule only advances when
    // polled). It cannot time out, so the watchdog guards it.
    blocking([&] {
      GR_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, t.data_ptr(), count_of(t), mpi_type(t.scalar_type()),
                                 mpi_op(op, t.scalar_type()), comm_));
    }, "allreduce");
  });
}

WorkPtr ProcessGroupMPI::do_broadcast(Tensor& tensor, int root, const CallInfo& call) {
  Tensor t = tensor;
  return enqueue(call, {t}, [this, t, root] {
    MPI_Request req;
    GR_MPI_CHECK(MPI_Ibcast(t.data_ptr(), count_of(t), mpi_type(t.scalar_type()), root, comm_, &req));
    complete(req, timeout_, "broadcast");
  });
}

WorkPtr ProcessGroupMPI::do_allgather(std::vector<Tensor>& outputs, const Tensor& input, const CallInfo& call) {
  std::vector<Tensor> outs = outputs;
  Tensor in = input;
  return enqueue(call, outs, [this, outs, in] {
    const FlatBuffer gathered(outs);  // MPI gathers into one buffer
    MPI_Request req;
    GR_MPI_CHECK(MPI_Iallgather(in.data_ptr(), count_of(in), mpi_type(in.scalar_type()), gathered.flat().data_ptr(),
                                count_of(in), mpi_type(in.scalar_type()), comm_, &req));
    complete(req, timeout_, "allgather");
    gathered.copy_out(outs);
  });
}

WorkPtr ProcessGroupMPI::do_reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op,
                                           const CallInfo& call) {
  Tensor out = output;
  std::vector<Tensor> ins = inputs;
  return enqueue(call, {out}, [this, out, ins, op] {
    const FlatBuffer all = FlatBuffer::of(ins);
    MPI_Request req;
    GR_MPI_CHECK(MPI_Ireduce_scatter_block(all.flat().data_ptr(), out.data_ptr(), count_of(out),
                                           mpi_type(out.scalar_type()),
                                           mpi_op(op, out.scalar_type()), comm_, &req));
    complete(req, timeout_, "reduce_scatter");
  });
}

WorkPtr ProcessGroupMPI::do_reduce(Tensor& tensor, int root, ReduceOp op, const CallInfo& call) {
  Tensor t = tensor;
  return enqueue(call, {t}, [this, t, root, op] {
    MPI_Request req;
    const void* send = rank_ == root ? MPI_IN_PLACE : t.data_ptr();
    GR_MPI_CHECK(MPI_Ireduce(send, rank_ == root ? t.data_ptr() : nullptr, count_of(t), mpi_type(t.scalar_type()),
                             mpi_op(op, t.scalar_type()), root, comm_, &req));
    complete(req, timeout_, "reduce");
  });
}

WorkPtr ProcessGroupMPI::do_barrier(const CallInfo& call) {
  return enqueue(call, {}, [this] {
    MPI_Request req;
    GR_MPI_CHECK(MPI_Ibarrier(comm_, &req));
    complete(req, timeout_, "barrier");
  });
}

WorkPtr ProcessGroupMPI::do_send(const Tensor& tensor, int dst, int tag, const CallInfo& call) {
  Tensor t = tensor;
  return enqueue(call, {t}, [this, t, dst, tag] {
    MPI_Request req;
    GR_MPI_CHECK(MPI_Isend(t.data_ptr(), count_of(t), mpi_type(t.scalar_type()), dst, tag, comm_, &req));
    complete(req, timeout_, "send");
  });
}

WorkPtr ProcessGroupMPI::do_recv(Tensor& tensor, int src, int tag, const CallInfo& call) {
  Tensor t = tensor;
  return enqueue(call, {t}, [this, t, src, tag] {
    MPI_Request req;
    GR_MPI_CHECK(MPI_Irecv(t.data_ptr(), count_of(t), mpi_type(t.scalar_type()), src, tag, comm_, &req));
    complete(req, timeout_, "recv");
  });
}

// The "mpi" backend: rank and size come from MPI itself.
static const bool kRegistered = [] {
  register_backend(
      "mpi",
      [](const BackendContext& ctx) -> ProcessGroupPtr {
        return ProcessGroupMPI::create(ctx.members);
      },
      /*uses_store=*/false);
  return true;
}();

}  // namespace gr::distributed
