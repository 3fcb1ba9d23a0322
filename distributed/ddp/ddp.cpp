// DistributedDataParallel: the model check and broadcasts at construction, the buffer
// broadcast before each forward, arming the Reducer after forward, no_sync and join.
#include "distributed/ddp/ddp.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "autograd/grad_mode.h"
#include "core/factory.h"
#include "core/profiler.h"
#include "distributed/ddp/control_tensor.h"
#include "distributed/backends/flat_buffer.h"
#include "distributed/backends/init.h"

namespace gr::nn::parallel {

using distributed::control_tensor;
using distributed::host_values;
using distributed::ProcessGroup;
using distributed::ReduceOp;

// A broadcast in flight: per device, the flat buffer, the tensors it goes back into, the work.
struct BufferBroadcast {
  struct Part {
    distributed::FlatBuffer buffer;
    TensorList tensors;
    distributed::WorkPtr work;
  };
  std::vector<Part> parts;
};

namespace {

constexpr const char* kDDP = "DistributedDataParallel";

// Rank `root`'s values of `tensors` on every rank, in one broadcast per device: the tensors
// travel as one flat buffer (their bytes when their dtypes differ: a broadcast does no
// arithmetic). start_broadcast issues it, finish_broadcast waits and copies out.
BufferBroadcast start_broadcast(ProcessGroup& group, const TensorList& tensors, int root = 0) {
  std::map<std::string, TensorList> by_device;
  for (const Tensor& t : tensors)
    if (t.defined() && t.numel() > 0) by_device[t.device().str()].push_back(t);
  NoGradGuard no_grad;
  BufferBroadcast out;
  for (const auto& [device, list] : by_device) {
    distributed::FlatBuffer buffer = distributed::FlatBuffer::of(list);
    Tensor flat = buffer.flat();
    out.parts.push_back({std::move(buffer), list, group.broadcast(flat, root)});
  }
  return out;
}

void finish_broadcast(ProcessGroup& group, BufferBroadcast& b, const char* what) {
  NoGradGuard no_grad;
  for (BufferBroadcast::Part& part : b.parts) {
    if (!part.work) continue;
    distributed::wait_for(part.work, group, kDDP, what);
    part.work.reset();
    part.buffer.copy_out(part.tensors);
  }
}

void broadcast_coalesced(ProcessGroup& group, const TensorList& tensors, const char* what, int root = 0) {
  BufferBroadcast b = start_broadcast(group, tensors, root);
  finish_broadcast(group, b, what);
}

// The device of DDP's control tensors: the parameters'.
Device control_device(nn::Module& module) {
  for (const Tensor& p : module.parameters()) return p.device();
  return Device(kCPU);
}

// Per parameter: dims, sizes, dtype; the count first. Compared across ranks.
std::vector<int64_t> fingerprint(const OrderedDict<Tensor>& params, std::vector<size_t>& starts) {
  std::vector<int64_t> fp{static_cast<int64_t>(params.size())};
  for (const auto& [name, p] : params) {
    starts.push_back(fp.size());
    fp.push_back(p.dim());
    for (int64_t s : p.sizes()) fp.push_back(s);
    fp.push_back(static_cast<int64_t>(p.scalar_type()));
  }
  return fp;
}

std::string describe_entry(const int64_t* fp, size_t pos, size_t len) {
  if (pos >= len || fp[pos] < 0 || pos + fp[pos] + 1 >= len) return "no such parameter";
  std::ostringstream out;
  out << "shape [";
  for (int64_t d = 0; d < fp[pos]; ++d) out << (d ? ", " : "") << fp[pos + 1 + d];
  out << "] " << static_cast<ScalarType>(fp[pos + fp[pos] + 1]);
  return out.str();
}

}  // namespace

DistributedDataParallelBase::DistributedDataParallelBase(std::shared_ptr<Module> module,
                                                         distributed::ProcessGroupPtr group,
                                                         const DistributedDataParallelOptions& options)
    : Module("DistributedDataParallel"), module_(std::move(module)), group_(std::move(group)), options_(options) {
  GR_CHECK(module_ != nullptr, "DistributedDataParallel: the module is null");
  if (!group_) {
    GR_CHECK(distributed::is_initialized(),
             "DistributedDataParallel: no process group: pass one, or call init_process_group() first");
    group_ = distributed::default_group();
  }
  GR_CHECK(options_.bucket_cap_mb() > 0 && options_.first_bucket_cap_mb() > 0,
           "DistributedDataParallel: bucket_cap_mb and first_bucket_cap_mb must be positive, got ",
           options_.bucket_cap_mb(), " and ", options_.first_bucket_cap_mb());
  // The wrapped module's own entries under their own names: no "module." prefix anywhere.
  const OrderedDict<Tensor> persistent = module_->state_dict();
  for (const auto& [name, p] : module_->own_parameters()) register_parameter(name, p, false);
  for (const auto& [name, b] : module_->own_buffers()) register_buffer(name, b, persistent.find(name) != nullptr);
  for (const auto& [name, child] : module_->named_children()) register_module(name, child);
  train(module_->is_training());

  check_and_broadcast_state();

  TensorList params;
  std::vector<std::string> names;
  for (const auto& [name, p] : module_->named_parameters())
    if (p.requires_grad()) {
      params.push_back(p);
      names.push_back(name);
    }
  distributed::ReducerOptions ro;
  ro.bucket_bytes = static_cast<int64_t>(options_.bucket_cap_mb() * (1 << 20));
  ro.first_bucket_bytes = static_cast<int64_t>(options_.first_bucket_cap_mb() * (1 << 20));
  ro.find_unused_parameters = options_.find_unused_parameters();
  ro.gradient_as_bucket_view = options_.gradient_as_bucket_view();
  ro.static_graph = options_.static_graph();
  ro.shard_gradients = options_.shard_gradients();
  ro.gather_in_forward = options_.gather_in_forward();
  const TensorList owned = params;
  reducer_ = std::make_unique<distributed::Reducer>(std::move(params), std::move(names), group_, ro);
  if (options_.gather_in_forward()) install_gather_hooks(owned);
  if (distributed::ddp_info_logging()) std::fprintf(stderr, "%s", reducer_->layout_string().c_str());
}

DistributedDataParallelBase::~DistributedDataParallelBase() {
  // The model outlives its wrapper: the parameters get the gathers in flight (Note [Gathers
  // in forward]), and the hooks that point at this wrapper go.
  try {
    wait_for_parameters();
  } catch (...) {  // the Reducer's destructor waits for what is left, quietly
  }
  remove_gather_hooks();
}

void DistributedDataParallelBase::check_and_broadcast_state() {
  ProcessGroup& g = *group_;
  const OrderedDict<Tensor> params = module_->named_parameters();
  std::vector<size_t> starts;
  std::vector<int64_t> fp = fingerprint(params, starts);
  // Lengths first (padded to the longest), then rank 0's fingerprint to everyone.
  const Device device = control_device(*module_);
  Tensor len = control_tensor({static_cast<int64_t>(fp.size())}, device);
  distributed::wait_for(g.allreduce(len, ReduceOp::Max), g, kDDP, "the model check");
  const int64_t L = host_values(len)[0];
  fp.resize(static_cast<size_t>(L), -1);
  Tensor zero = control_tensor(fp, device);
  distributed::wait_for(g.broadcast(zero, 0), g, kDDP, "the model check");
  const std::vector<int64_t> rank0 = host_values(zero);
  const int64_t* z = rank0.data();
  std::string mismatch;
  if (z[0] != fp[0]) {
    mismatch = "rank " + std::to_string(g.rank()) + " has " + std::to_string(fp[0]) + " parameters, rank 0 has " +
               std::to_string(z[0]);
  } else {
    for (size_t j = 0; j < starts.size() && mismatch.empty(); ++j) {
      const size_t end = j + 1 < starts.size() ? starts[j + 1] : fp.size();
      for (size_t k = starts[j]; k < end; ++k)
        if (fp[k] != z[k]) {
          mismatch = "parameter " + params.keys()[j] + " has " + describe_entry(fp.data(), starts[j], fp.size()) +
                     " on rank " + std::to_string(g.rank()) + " but " +
                     describe_entry(z, starts[j], static_cast<size_t>(L)) + " on rank 0";
          break;
        }
    }
  }
  Tensor bad = control_tensor({mismatch.empty() ? 0 : 1}, device);
  distributed::wait_for(g.allreduce(bad, ReduceOp::Max), g, kDDP, "the model check");
  if (host_values(bad)[0]) {
    GR_CHECK(mismatch.empty(), "DistributedDataParallel: the ranks' models differ: ", mismatch,
             ". Every rank must build the same model.");
    GR_ERROR("DistributedDataParallel: the ranks' models differ (another rank reports which parameter). Every rank "
             "must build the same model.");
  }
  broadcast_coalesced(g, module_->parameters(), "the broadcast of rank 0's parameters");
  sync_buffers();
}

void DistributedDataParallelBase::sync_buffers() {
  if (group_->size() > 1) broadcast_coalesced(*group_, module_->buffers(), "the broadcast of rank 0's buffers");
}

void DistributedDataParallelBase::pre_forward() {
  const int64_t start = profiler::now_ns();
  if (join_enabled_) {
    // [ranks still training, ranks that will all-reduce gradients]: joined ranks read it.
    const bool will_sync = sync_enabled_ && GradMode::is_enabled();
    Tensor flag = control_tensor({1, will_sync ? 1 : 0}, control_device(*module_));
    distributed::wait_for(group_->allreduce(flag, ReduceOp::Sum), *group_, kDDP, "the join flag all-reduce");
  }
  reducer_->prepare_for_forward();
  if (pending_buffers_) finish_buffer_broadcast(/*consume=*/true);  // the previous forward issued it: Note [Gathers in forward]
  else if (options_.broadcast_buffers()) sync_buffers();
  if (options_.gather_in_forward()) gather_before_forward();
  forward_start_ns_ = start;
}

void DistributedDataParallelBase::finish_buffer_broadcast(bool consume) {
  if (!pending_buffers_) return;
  finish_broadcast(*group_, *pending_buffers_, "the broadcast of rank 0's buffers");
  if (consume) pending_buffers_.reset();
}

void DistributedDataParallelBase::post_forward(const TensorList& outputs) {
  if (options_.gather_in_forward()) gather_after_forward();
  const int64_t end = profiler::now_ns();
  reducer_->set_forward_ms((end - forward_start_ns_) * 1e-6);
  if (profiler::enabled()) profiler::record("DDP forward", "forward", forward_start_ns_, end);
  bool needs = false;
  for (const Tensor& t : outputs) needs = needs || (t.defined() && t.requires_grad());
  if (sync_enabled_ && GradMode::is_enabled() && needs) reducer_->prepare_for_backward(outputs);
  else reducer_->disarm();
  // The next forward's buffer broadcast, issued now, ahead of the coming backward's
  // collectives and the gathers the next forward waits for (Note [Gathers in forward]).
  if (options_.gather_in_forward() && options_.broadcast_buffers() && group_->size() > 1)
    pending_buffers_ = std::make_unique<BufferBroadcast>(start_broadcast(*group_, module_->buffers()));
}

void DistributedDataParallelBase::join(const std::function<void()>& body) {
  GR_CHECK(!join_enabled_, "DistributedDataParallel::join: already inside join");
  GR_CHECK(!reducer_->optimizer_in_backward(),
           "DistributedDataParallel::join: not with apply_optimizer_in_backward (a rank out of data would step with "
           "the zero gradients of its shadow iterations)");
  join_enabled_ = true;
  try {
    body();
  } catch (...) {
    join_enabled_ = false;
    throw;
  }
  join_enabled_ = false;
  // This rank is out of data: shadow the others' iterations until every rank is.
  int64_t shadowed = 0;
  for (;; ++shadowed) {
    Tensor flag = control_tensor({0, 0}, control_device(*module_));
    distributed::wait_for(group_->allreduce(flag, ReduceOp::Sum), *group_, kDDP, "the join flag all-reduce");
    const std::vector<int64_t> f = host_values(flag);
    if (f[0] == 0) {
      if (distributed::ddp_info_logging() && shadowed > 0)
        std::fprintf(stderr, "[rank %d] DDP join: shadowed %lld iteration(s) of ranks with more data\n",
                     group_->rank(), static_cast<long long>(shadowed));
      break;
    }
    reducer_->prepare_for_forward();
    if (options_.broadcast_buffers()) sync_buffers();
    if (f[1] > 0) reducer_->shadow_iteration();
  }
  // Ranks that ran out early did not step their optimizers for the last iterations: every
  // rank takes the model of the lowest rank among those that trained to the end.
  const bool last = shadowed == 0;
  Tensor who = control_tensor({last ? group_->rank() : group_->size()}, control_device(*module_));
  distributed::wait_for(group_->allreduce(who, ReduceOp::Min), *group_, kDDP, "the join's final-model all-reduce");
  const int root = static_cast<int>(host_values(who)[0]);
  broadcast_coalesced(*group_, module_->parameters(), "the join's final-model broadcast", root);
  broadcast_coalesced(*group_, module_->buffers(), "the join's final-model broadcast", root);
}

std::string DistributedDataParallelBase::write_chrome_trace(const std::string& dir) const {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  GR_CHECK(!ec, "DistributedDataParallel::write_chrome_trace: cannot create '", dir, "': ", ec.message());
  const std::string path = (std::filesystem::path(dir) / ("rank" + std::to_string(group_->rank()) + ".json")).string();
  profiler::write_chrome_trace(path, group_->rank(), "rank " + std::to_string(group_->rank()));
  return path;
}

void DistributedDataParallelBase::register_comm_hook(CommHook hook) { reducer_->set_comm_hook(std::move(hook)); }

void DistributedDataParallelBase::apply_optimizer_in_backward(distributed::OptimizerFactory optimizer_class) {
  reducer_->set_optimizer_in_backward(std::move(optimizer_class));
}

void DistributedDataParallelBase::train(bool on) {
  if (reducer_) wait_for_parameters();  // eval() before an evaluation: Note [Gathers in forward]
  Module::train(on);
  if (module_) module_->train(on);
}

void DistributedDataParallelBase::pretty_print(std::ostream& out) const {
  out << "gr::nn::parallel::DistributedDataParallel(world_size=" << group_->size() << ", backend="
      << group_->backend_name() << ", buckets=" << reducer_->bucket_indices().size() << ")";
}

DistributedDataParallelBase::NoSyncGuard::NoSyncGuard(DistributedDataParallelBase& ddp)
    : ddp_(ddp), previous_(ddp.sync_enabled_) {
  ddp_.sync_enabled_ = false;
}

DistributedDataParallelBase::NoSyncGuard::~NoSyncGuard() { ddp_.sync_enabled_ = previous_; }

}  // namespace gr::nn::parallel
