// ProcessGroupGloo: CPU collectives over TCP with Facebook's Gloo (as torch's gloo backend),
// connected through our Store; collectives run on the group's worker threads (2, as torch).
#pragma once

#include <memory>

#include "distributed/backends/queued_process_group.h"
#include "distributed/store/store.h"

namespace gloo {
class Context;
}

namespace gr::distributed {

struct GlooOptions {
  // The local address peers connect to. Empty: GRADRING_SOCKET_IFNAME / GLOO_SOCKET_IFNAME
  // (an interface name) if set, else the address this host uses to reach `master_addr`.
  std::string hostname;
  std::string interface;
  std::string master_addr = "127.0.0.1";
  std::chrono::milliseconds timeout{std::chrono::minutes(30)};
  // Worker threads: 2 (as torch) lets consecutive collectives overlap (e.g. DDP's buckets).
  int threads = 2;
};

class ProcessGroupGloo : public QueuedProcessGroup {
 public:
  // Rendezvous of `size` processes through `store` (every rank passes the same store keys).
  ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size, const GlooOptions& options = {});
  ~ProcessGroupGloo() override;

  std::string backend_name() const override { return "gloo"; }

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
  // A collective's Gloo tag is its sequence number: its place in the issue order, the same
  // on every rank, whichever worker thread runs it.
  static uint32_t tag_of(const CallInfo& call) { return static_cast<uint32_t>(call.sequence); }
  // Gloo's all-reduce of `t` in place, on the calling (worker) thread.
  void run_allreduce(const Tensor& t, ReduceOp op, uint32_t tag);
  // Rings on Gloo's unbound buffers, in place (Note [Rings over Gloo's pairs]).
  void run_reduce_scatter(const Tensor& out, const std::vector<Tensor>& ins, ReduceOp op, uint32_t tag);
  void run_allgather(const std::vector<Tensor>& outs, const Tensor& in, uint32_t tag);
  std::string explain_failure(const std::string& backend_message) const override;
  void record_peer_addresses(Store& store);
  std::vector<std::pair<std::string, int>> peer_addresses_;  // Gloo's text for each peer's address, rank
  std::shared_ptr<gloo::Context> context_;
};

}  // namespace gr::distributed
