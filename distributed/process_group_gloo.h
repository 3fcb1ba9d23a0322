// ProcessGroupGloo: CPU collectives over TCP with Facebook's Gloo (as torch's gloo backend),
// connected through our Store; each collective runs on the group's worker thread.
#pragma once

#include <memory>

#include "distributed/queued_process_group.h"
#include "distributed/store.h"

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
};

class ProcessGroupGloo : public QueuedProcessGroup {
 public:
  // Rendezvous of `size` processes through `store` (every rank passes the same store keys).
  ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size, const GlooOptions& options = {});
  ~ProcessGroupGloo() override;

  std::string backend_name() const override { return "gloo"; }
  WorkPtr allreduce(Tensor& tensor, ReduceOp op) override;
  WorkPtr broadcast(Tensor& tensor, int root) override;
  WorkPtr allgather(std::vector<Tensor>& outputs, const Tensor& input) override;
  WorkPtr reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op) override;
  WorkPtr reduce(Tensor& tensor, int root, ReduceOp op) override;
  WorkPtr barrier() override;
  WorkPtr send(const Tensor& tensor, int dst, int tag) override;
  WorkPtr recv(Tensor& tensor, int src, int tag) override;

 private:
  uint32_t next_tag() { return tag_++; }  // used on the worker thread only
  std::shared_ptr<gloo::Context> context_;
  uint32_t tag_ = 0;
};

// The address this host uses to reach `peer` (the source address of a UDP "connection").
std::string local_address_for(const std::string& peer);

}  // namespace gr::distributed
