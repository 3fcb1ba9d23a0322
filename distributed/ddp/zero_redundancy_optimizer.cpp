// ZeroRedundancyOptimizer: the partition, the local optimizer, the bucketed all-gather of
// the updated parameters, and the state (consolidated, per-rank shards, re-sharding).
#include "distributed/ddp/zero_redundancy_optimizer.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <sstream>

#include "autograd/grad_mode.h"
#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "core/profiler.h"
#include "distributed/backends/flat_buffer.h"
#include "distributed/backends/init.h"
#include "distributed/ddp/control_tensor.h"
#include "distributed/ddp/reducer.h"

namespace gr::distributed {

namespace {

constexpr const char* kZero = "ZeroRedundancyOptimizer";

ProcessGroupPtr group_or_default(ProcessGroupPtr group) {
  if (group) return group;
  GR_CHECK(is_initialized(), kZero, ": no process group: pass one, or call init_process_group() first");
  return default_group();
}

// The wrapped optimizer's defaults, from one built over every parameter (it allocates no state).
std::unique_ptr<optim::OptimizerOptions> defaults_of(const OptimizerFactory& factory,
                                                     const std::vector<optim::OptimizerParamGroup>& groups) {
  GR_CHECK(factory != nullptr, kZero, ": optimizer_class is empty");
  return factory(groups)->defaults().clone();
}

}  // namespace

std::vector<int> partition_parameters(const std::vector<int64_t>& param_bytes, int world_size) {
  GR_CHECK(world_size >= 1, "partition_parameters: world_size must be at least 1, got ", world_size);
  std::vector<size_t> order(param_bytes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return param_bytes[a] > param_bytes[b]; });
  std::vector<int64_t> load(static_cast<size_t>(world_size), 0);
  std::vector<int> owner(param_bytes.size(), 0);
  for (size_t i : order) {
    const int r = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    owner[i] = r;
    load[static_cast<size_t>(r)] += param_bytes[i];
  }
  return owner;
}

// The parameters of one dtype and device: per rank, the ones it owns (global indices, in
// order) laid back to back, each rank's run padded to the same number of buckets.
struct ZeroRedundancyOptimizer::GatherGroup {
  std::vector<std::vector<size_t>> owned;  // per rank
  std::vector<std::vector<int64_t>> offset;  // per rank, per owned parameter: elements into its run
  int64_t bucket_elems = 1;
  int64_t buckets = 0;  // per rank's run
  Tensor like;          // a parameter of the group (dtype, device)
};

ZeroRedundancyOptimizer::ZeroRedundancyOptimizer(std::vector<Tensor> params, OptimizerFactory optimizer_class,
                                                 ProcessGroupPtr group, double bucket_cap_mb)
    : ZeroRedundancyOptimizer(std::vector<optim::OptimizerParamGroup>{optim::OptimizerParamGroup(std::move(params))},
                              std::move(optimizer_class), std::move(group), bucket_cap_mb) {}

ZeroRedundancyOptimizer::ZeroRedundancyOptimizer(std::vector<optim::OptimizerParamGroup> params,
                                                 OptimizerFactory optimizer_class, ProcessGroupPtr group,
                                                 double bucket_cap_mb)
    : Optimizer(kZero, params, defaults_of(optimizer_class, params)),
      group_(group_or_default(std::move(group))),
      bucket_bytes_(static_cast<int64_t>(bucket_cap_mb * (1 << 20))) {
  GR_CHECK(bucket_cap_mb > 0, kZero, ": bucket_cap_mb must be positive, got ", bucket_cap_mb);
  params_ = parameters();
  std::vector<int64_t> bytes;
  for (const Tensor& p : params_) {
    GR_CHECK(p.is_contiguous(), kZero, ": parameters must be contiguous");
    bytes.push_back(static_cast<int64_t>(p.nbytes()));
  }
  owner_ = partition_parameters(bytes, group_->size());
  build_local_optimizer(optimizer_class);
  build_gather_groups();
  if (ddp_info_logging()) log_partition();
}

ZeroRedundancyOptimizer::~ZeroRedundancyOptimizer() = default;

std::string ZeroRedundancyOptimizer::who() const {
  return detail::str_cat(kZero, " on rank ", group_->rank(), " of ", group_->size());
}

void ZeroRedundancyOptimizer::build_local_optimizer(const OptimizerFactory& factory) {
  std::vector<optim::OptimizerParamGroup> local;
  size_t index = 0;
  for (size_t g = 0; g < param_groups().size(); ++g) {
    std::vector<Tensor> mine;
    std::vector<size_t> global;
    for (const Tensor& p : param_groups()[g].params()) {
      if (owner_[index] == group_->rank()) {
        mine.push_back(p);
        global.push_back(index);
      }
      ++index;
    }
    if (mine.empty()) continue;  // an optimizer refuses empty groups
    local.emplace_back(std::move(mine), param_groups()[g].options().clone());
    local_group_of_.push_back(g);
    local_index_.push_back(std::move(global));
  }
  if (!local.empty()) local_ = factory(std::move(local));
  wrapped_name_ = local_ ? local_->name() : factory(param_groups())->name();
}

void ZeroRedundancyOptimizer::build_gather_groups() {
  std::map<std::pair<int, std::string>, size_t> key_to_group;
  const int n = group_->size();
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    auto [it, fresh] = key_to_group.try_emplace({static_cast<int>(p.scalar_type()), p.device().str()}, gather_.size());
    if (fresh) {
      GatherGroup g;
      g.owned.resize(static_cast<size_t>(n));
      g.offset.resize(static_cast<size_t>(n));
      g.like = p;
      gather_.push_back(std::move(g));
    }
    gather_[it->second].owned[static_cast<size_t>(owner_[i])].push_back(i);
  }
  for (GatherGroup& g : gather_) {
    int64_t longest = 0;
    for (int r = 0; r < n; ++r) {
      int64_t run = 0;
      for (size_t i : g.owned[static_cast<size_t>(r)]) {
        g.offset[static_cast<size_t>(r)].push_back(run);
        run += params_[i].numel();
      }
      longest = std::max(longest, run);
    }
    g.bucket_elems = std::max<int64_t>(1, std::min<int64_t>(longest, bucket_bytes_ / g.like.element_size()));
    g.buckets = longest == 0 ? 0 : (longest + g.bucket_elems - 1) / g.bucket_elems;
  }
}

std::vector<size_t> ZeroRedundancyOptimizer::local_parameter_indices() const {
  std::vector<size_t> out;
  for (const auto& indices : local_index_) out.insert(out.end(), indices.begin(), indices.end());
  return out;
}

int64_t ZeroRedundancyOptimizer::state_bytes() const {
  int64_t bytes = 0;
  if (local_)
    for (const auto& [key, t] : local_->state_dict())
      if (key.rfind("state.", 0) == 0) bytes += static_cast<int64_t>(t.nbytes());
  return bytes;
}

void ZeroRedundancyOptimizer::sync_local_options() {
  // A scheduler (or the user) changes this optimizer's groups; the local ones follow.
  for (size_t lg = 0; lg < local_group_of_.size(); ++lg)
    local_->param_groups()[lg].set_options(param_groups()[local_group_of_[lg]].options().clone());
}

Tensor ZeroRedundancyOptimizer::step(optim::LossClosure closure) {
  Tensor loss = run_closure(closure);
  if (local_) {
    profiler::ScopedEvent span("ZeRO shard step", "zero");
    sync_local_options();
    local_->step();
  }
  all_gather_parameters();
  return loss;
}

// Note [ZeRO all-gather]
// After the local step each rank holds the new values of the parameters it owns. Per dtype
// and device, rank r's owned parameters form one run of elements; all runs are cut into the
// same number of buckets of `bucket_elems` (the shorter runs padded), and bucket k is one
// all-gather of every rank's k-th piece. All buckets are issued before the first is waited
// for, so they follow one another on the backend's threads; each rank then copies the other
// ranks' pieces into their parameters.
void ZeroRedundancyOptimizer::all_gather_parameters() {
  const int n = group_->size();
  if (n == 1) return;
  NoGradGuard no_grad;
  const size_t me = static_cast<size_t>(group_->rank());
  for (GatherGroup& g : gather_) {
    if (g.buckets == 0) continue;
    const int64_t run = g.buckets * g.bucket_elems;
    const TensorOptions options = TensorOptions(g.like.scalar_type()).device(g.like.device());
    Tensor input = zeros({run}, options);
    for (size_t s = 0; s < g.owned[me].size(); ++s) {
      const Tensor& p = params_[g.owned[me][s]];
      native::copy_(input.narrow(0, g.offset[me][s], p.numel()), p.reshape({-1}));
    }
    Tensor gathered = empty({n, run}, options);
    std::vector<WorkPtr> works;
    std::vector<int64_t> launched;
    for (int64_t k = 0; k < g.buckets; ++k) {
      std::vector<Tensor> outputs;
      for (int r = 0; r < n; ++r) outputs.push_back(gathered.select(0, r).narrow(0, k * g.bucket_elems, g.bucket_elems));
      launched.push_back(profiler::now_ns());
      works.push_back(group_->allgather(outputs, input.narrow(0, k * g.bucket_elems, g.bucket_elems)));
    }
    for (size_t k = 0; k < works.size(); ++k) {
      wait_for(works[k], *group_, kZero, "the all-gather of parameter bucket " + std::to_string(k));
      if (profiler::enabled())
        profiler::record("allgather bucket " + std::to_string(k), "comm", launched[k], profiler::now_ns(), "comm");
    }
    for (int r = 0; r < n; ++r) {
      if (static_cast<size_t>(r) == me) continue;
      const Tensor from = gathered.select(0, r);
      for (size_t s = 0; s < g.owned[static_cast<size_t>(r)].size(); ++s) {
        const Tensor& p = params_[g.owned[static_cast<size_t>(r)][s]];
        native::copy_(p, from.narrow(0, g.offset[static_cast<size_t>(r)][s], p.numel()).view(p.sizes()));
      }
    }
  }
}

void ZeroRedundancyOptimizer::log_partition() const {
  const int n = group_->size();
  std::vector<int64_t> bytes(static_cast<size_t>(n), 0), count(static_cast<size_t>(n), 0);
  int64_t total = 0;
  for (size_t i = 0; i < params_.size(); ++i) {
    bytes[static_cast<size_t>(owner_[i])] += static_cast<int64_t>(params_[i].nbytes());
    ++count[static_cast<size_t>(owner_[i])];
    total += static_cast<int64_t>(params_[i].nbytes());
  }
  std::ostringstream out;
  out << "[rank " << group_->rank() << "] ZeroRedundancyOptimizer (" << wrapped_name_ << "): " << params_.size()
      << " parameters, " << total << " bytes over " << n << " rank(s)\n";
  for (int r = 0; r < n; ++r)
    out << "[rank " << group_->rank() << "]   rank " << r << ": " << count[static_cast<size_t>(r)] << " parameter(s), "
        << bytes[static_cast<size_t>(r)] << " bytes\n";
  std::fprintf(stderr, "%s", out.str().c_str());
}

}  // namespace gr::distributed
