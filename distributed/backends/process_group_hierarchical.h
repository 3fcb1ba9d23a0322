// ProcessGroupHierarchical, the "hierarchical" backend: all-reduce in three steps for jobs of
// several nodes with several ranks each. The ranks of a node reduce into their node's leader
// through shared memory (shm), the leaders all-reduce across nodes over Gloo, and each leader
// broadcasts the result to its node through shared memory again: only one rank per node sends
// over the network, with 1 / (ranks per node) of the flat ring's traffic on each link. Every
// other collective runs on a flat Gloo group of all ranks. Ranks are laid out as gradring-run
// and torchrun number them: node n holds ranks n * L .. n * L + L - 1, L = LOCAL_WORLD_SIZE.
#pragma once

#include <memory>
#include <string>

#include "distributed/backends/queued_process_group.h"
#include "distributed/store/store.h"

namespace gr::distributed {

class ProcessGroupHierarchical : public QueuedProcessGroup {
 public:
  // Rendezvous through `store`: the flat Gloo group of all `size` ranks, this node's shm group
  // (`local_size` ranks) and, on leaders (local rank 0), the Gloo group of the leaders.
  ProcessGroupHierarchical(std::shared_ptr<Store> store, int rank, int size, int local_size,
                           std::chrono::milliseconds timeout);
  ~ProcessGroupHierarchical() override;

  std::string backend_name() const override { return "hierarchical"; }
  int local_size() const { return local_size_; }
  bool is_leader() const { return rank_ % local_size_ == 0; }

 protected:
  WorkPtr do_allreduce(Tensor& tensor, ReduceOp op, const CallInfo& call) override;
  WorkPtr do_broadcast(Tensor& tensor, int root, const CallInfo& call) override;
  WorkPtr do_allgather(std::vector<Tensor>& outputs, const Tensor& input, const CallInfo& call) override;
  WorkPtr do_reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op,
                            const CallInfo& call) override;
  WorkPtr do_reduce(Tensor& tensor, int root, ReduceOp op, const CallInfo& call) override;
  WorkPtr do_barrier(const CallInfo& call) override;
  WorkPtr do_send(const Tensor& tensor, int dst, int tag, const CallInfo& call) override;
  WorkPtr do_recv(Tensor& tensor, int src, int tag, const CallInfo& call) override;
  bool sends_to_self() const override { return false; }

 private:
  // Runs `issue` (a collective of the flat group) as this group's job, so that every
  // collective keeps the order the caller issued them in.
  template <class Issue>
  WorkPtr on_flat(const CallInfo& call, std::vector<Tensor> outputs, Issue issue, bool after_earlier = false);

  int local_size_;
  ProcessGroupPtr flat_;     // Gloo, every rank
  ProcessGroupPtr node_;     // shm, this node's ranks (null with one rank per node)
  ProcessGroupPtr leaders_;  // Gloo, local rank 0 of every node (null elsewhere, or with one node)
};

}  // namespace gr::distributed
