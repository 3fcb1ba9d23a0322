// ZeroRedundancyOptimizer: ZeRO stage 1 (Rajbhandari et al., 2020) with the API of
// torch.distributed.optim.ZeroRedundancyOptimizer. Every rank keeps all parameters and (from
// DDP) all averaged gradients, but the wrapped optimizer's state only for the parameters it
// owns; step() updates those, then the ranks all-gather the updated parameters in buckets.
// See Note [ZeRO partition] and docs/ddp-internals.md ("Sharding").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "distributed/backends/process_group.h"
#include "distributed/ddp/optimizer_class.h"
#include "nn/optim/optimizer.h"

namespace gr::distributed {

// Note [ZeRO partition]
// Parameter i (counted over all groups, in order) belongs to one rank. The parameters are
// taken largest first (by bytes; ties: lower index first) and each goes to the rank that owns
// the fewest bytes so far (ties: the lower rank): a deterministic greedy balance (torch's,
// except that the byte counts carry over from one parameter group to the next, so several
// groups do not all load rank 0). The largest rank then owns at most total / N + the largest
// parameter. Returns the owner of each parameter.
std::vector<int> partition_parameters(const std::vector<int64_t>& param_bytes, int world_size);

class ZeroRedundancyOptimizer : public optim::Optimizer {
 public:
  // `params` are the model's parameters (the same list, in the same order, on every rank);
  // `optimizer_class` builds the local optimizer; parameters are all-gathered after each step
  // in buckets of up to `bucket_cap_mb` per rank (per dtype). A null `group`: the default group.
  ZeroRedundancyOptimizer(std::vector<optim::OptimizerParamGroup> params, OptimizerFactory optimizer_class,
                          ProcessGroupPtr group = nullptr, double bucket_cap_mb = 25);
  ZeroRedundancyOptimizer(std::vector<Tensor> params, OptimizerFactory optimizer_class,
                          ProcessGroupPtr group = nullptr, double bucket_cap_mb = 25);
  ~ZeroRedundancyOptimizer() override;

  // Steps this rank's partition (the group options, e.g. a scheduler's lr, are copied to the
  // local optimizer first), then all-gathers every rank's updated parameters. Collective.
  Tensor step(optim::LossClosure closure = nullptr) override;

  // Collective: gathers every rank's optimizer state on rank `to` (point to point), which can
  // then call state_dict().
  void consolidate_state_dict(int to = 0);
  // The full state in the plain optimizer's layout ("state.<i>.<name>", "param_groups.<g>.*";
  // it loads into the wrapped optimizer type over the same parameters) as of the last
  // consolidate_state_dict on this rank; an error on a rank that has none.
  OrderedDict<Tensor> state_dict() const override;
  // A full state (a consolidated one, or a plain optimizer's): each rank keeps the entries of
  // the parameters it owns, whatever world size saved it. A shard from local_state_dict()
  // must come from the same rank of the same world size (the error says so otherwise).
  void load_state_dict(const OrderedDict<Tensor>& state) override;
  // This rank's shard: its parameters' state under their global indices, the group options,
  // and "zero.world_size" / "zero.rank"; what a sharded snapshot saves per rank.
  OrderedDict<Tensor> local_state_dict() const;

  // The owner of each parameter (Note [ZeRO partition]), and what this rank owns.
  const std::vector<int>& partition() const { return owner_; }
  std::vector<size_t> local_parameter_indices() const;
  // The local optimizer (null on a rank that owns no parameter).
  optim::Optimizer* optim() { return local_.get(); }
  // Bytes of the optimizer state tensors this rank holds.
  int64_t state_bytes() const;
  const ProcessGroupPtr& process_group() const { return group_; }

 private:
  struct GatherGroup;  // the parameters of one dtype and device, per owner (zero_redundancy_optimizer.cpp)

  void build_local_optimizer(const OptimizerFactory& factory);
  void build_gather_groups();
  void sync_local_options();
  void all_gather_parameters();
  void log_partition() const;
  std::string who() const;

  ProcessGroupPtr group_;
  int64_t bucket_bytes_;
  TensorList params_;        // every parameter, in order
  std::vector<int> owner_;   // per parameter
  std::unique_ptr<optim::Optimizer> local_;
  std::string wrapped_name_;
  std::vector<size_t> local_group_of_;            // local group -> group of this optimizer
  std::vector<std::vector<size_t>> local_index_;  // local group -> its parameters' global indices
  std::vector<GatherGroup> gather_;
  std::optional<OrderedDict<Tensor>> consolidated_;
};

}  // namespace gr::distributed
