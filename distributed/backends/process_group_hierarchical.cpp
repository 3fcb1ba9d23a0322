// The "hierarchical" backend: shm inside a node, Gloo between the nodes' leaders.
#include "distributed/backends/process_group_hierarchical.h"

#include <cstdlib>
#include <string>

#include "distributed/backends/init.h"
#include "distributed/backends/process_group_gloo.h"
#include "distributed/backends/process_group_shm.h"
#include "distributed/store/prefix_store.h"

namespace gr::distributed {

ProcessGroupHierarchical::ProcessGroupHierarchical(std::shared_ptr<Store> store, int rank, int size, int local_size,
                                                   std::chrono::milliseconds timeout)
    : QueuedProcessGroup(rank, size), local_size_(local_size) {
  GR_CHECK(local_size >= 1 && size % local_size == 0, "hierarchical process group: ", size,
           " ranks do not make whole nodes of ", local_size, " ranks (LOCAL_WORLD_SIZE)");
  timeout_ = timeout;
  GlooOptions gloo;
  if (const char* addr = std::getenv("MASTER_ADDR"); addr && *addr) gloo.master_addr = addr;
  gloo.timeout = timeout;
  const int node = rank / local_size, nodes = size / local_size, local_rank = rank % local_size;
  flat_ = std::make_shared<ProcessGroupGloo>(std::make_shared<PrefixStore>("flat", store), rank, size, gloo);
  if (local_size > 1) {
    ShmOptions shm;
    shm.chunk_bytes = ProcessGroupShm::parse_chunk_kb(std::getenv("GRADRING_SHM_CHUNK_KB"));
    shm.timeout = timeout;
    node_ = std::make_shared<ProcessGroupShm>(std::make_shared<PrefixStore>("node" + std::to_string(node), store),
                                              local_rank, local_size, shm);
  }
  if (nodes > 1 && local_rank == 0)
    leaders_ = std::make_shared<ProcessGroupGloo>(std::make_shared<PrefixStore>("leaders", store), node, nodes, gloo);
  for (ProcessGroup* g : {flat_.get(), node_.get(), leaders_.get()})
    if (g) g->set_timeout(timeout);
}

ProcessGroupHierarchical::~ProcessGroupHierarchical() { shutdown(); }

template <class Issue>
WorkPtr ProcessGroupHierarchical::on_flat(const CallInfo& call, std::vector<Tensor> outputs, Issue issue,
                                          bool after_earlier) {
  return enqueue(call, std::move(outputs), [this, issue]() mutable { issue(*flat_)->wait(timeout_); }, after_earlier);
}

// Reduce into the leader (shm), all-reduce among leaders (Gloo), broadcast from the leader
// (shm). The three steps of one all-reduce run one after another on the group's worker, and
// all-reduces one at a time: each subgroup then sees the same order of calls on every rank.
WorkPtr ProcessGroupHierarchical::do_allreduce(Tensor& tensor, ReduceOp op, const CallInfo& call) {
  Tensor t = tensor;
  return enqueue(call, {t}, [this, t, op] {
    Tensor x = t;
    if (node_) node_->reduce(x, 0, op)->wait(timeout_);
    if (leaders_) leaders_->allreduce(x, op)->wait(timeout_);
    if (node_) node_->broadcast(x, 0)->wait(timeout_);
  });
}

WorkPtr ProcessGroupHierarchical::do_broadcast(Tensor& tensor, int root, const CallInfo& call) {
  Tensor t = tensor;
  return on_flat(call, {t}, [t, root](ProcessGroup& g) mutable { return g.broadcast(t, root); });
}

WorkPtr ProcessGroupHierarchical::do_allgather(std::vector<Tensor>& outputs, const Tensor& input, const CallInfo& call) {
  std::vector<Tensor> out = outputs;
  return on_flat(call, out, [out, input](ProcessGroup& g) mutable { return g.allgather(out, input); });
}

WorkPtr ProcessGroupHierarchical::do_reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op,
                                                    const CallInfo& call) {
  Tensor t = output;
  return on_flat(call, {t}, [t, inputs, op](ProcessGroup& g) mutable { return g.reduce_scatter(t, inputs, op); });
}

WorkPtr ProcessGroupHierarchical::do_reduce(Tensor& tensor, int root, ReduceOp op, const CallInfo& call) {
  Tensor t = tensor;
  return on_flat(call, {t}, [t, root, op](ProcessGroup& g) mutable { return g.reduce(t, root, op); });
}

WorkPtr ProcessGroupHierarchical::do_barrier(const CallInfo& call) {
  return on_flat(call, {}, [](ProcessGroup& g) { return g.barrier(); }, /*after_earlier=*/true);
}

WorkPtr ProcessGroupHierarchical::do_send(const Tensor& tensor, int dst, int tag, const CallInfo&) {
  return flat_->send(tensor, dst, tag);
}

WorkPtr ProcessGroupHierarchical::do_recv(Tensor& tensor, int src, int tag, const CallInfo&) {
  return flat_->recv(tensor, src, tag);
}

// The "hierarchical" backend, for the default group: nodes of LOCAL_WORLD_SIZE ranks (as the
// launcher sets it; 1 when unset).
static const bool kRegistered = [] {
  register_backend("hierarchical", [](const BackendContext& ctx) -> ProcessGroupPtr {
    if (ctx.rank < 0) return nullptr;  // not a member of this new_group
    GR_CHECK(static_cast<int>(ctx.members.size()) == ctx.size && (ctx.members.empty() || ctx.members.back() == ctx.size - 1),
             "hierarchical process group: only for the default group (new_group of some ranks: use gloo or shm)");
    int local = 1;
    if (const char* v = std::getenv("LOCAL_WORLD_SIZE"); v && *v) local = std::atoi(v);
    return std::make_shared<ProcessGroupHierarchical>(ctx.store, ctx.rank, ctx.size, local, ctx.timeout);
  });
  return true;
}();

}  // namespace gr::distributed
