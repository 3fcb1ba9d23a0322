// ProcessGroupShm: collectives between processes on one machine through one shared-memory
// segment, with no sockets and no threads besides the group's worker. In each round every
// rank copies (up to) one chunk into its own slot of the segment, the ranks meet at their
// round counters, and each rank reads what it needs from the others' slots. Every rank sums
// in rank order, so all ranks get bitwise the same result. See docs/distributed.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "distributed/backends/queued_process_group.h"
#include "distributed/backends/shared_memory.h"
#include "distributed/store/store.h"

namespace gr::distributed {

struct ShmOptions {
  // The most one rank moves per round (its slot; 2 x size slots are double-buffered); the
  // point-to-point channels take at most this much too. GRADRING_SHM_CHUNK_KB overrides it.
  size_t chunk_bytes = size_t(1) << 20;
  std::chrono::milliseconds timeout{std::chrono::minutes(30)};
};

class ProcessGroupShm : public QueuedProcessGroup {
 public:
  // Rendezvous of `size` processes of this machine through `store`: rank 0 makes the segment
  // and publishes its name; the others map it; the name is removed once all have.
  ProcessGroupShm(std::shared_ptr<Store> store, int rank, int size, const ShmOptions& options = {});
  ~ProcessGroupShm() override;

  std::string backend_name() const override { return "shm"; }

  // The segment's name while the rendezvous lasts (empty once removed from /dev/shm).
  std::string segment_name() const;
  size_t chunk_bytes() const { return chunk_bytes_; }
  // GRADRING_SHM_CHUNK_KB (null or empty: the default); throws on a bad value.
  static size_t parse_chunk_kb(const char* value);

  // What a round's slot starts with: the collective each rank is in, compared across ranks
  // so that mismatched calls fail with both descriptions instead of mixing data.
  struct Call {
    uint64_t sequence;  // the collective's place in the order this group runs them
    int32_t kind;       // which collective (OpType)
    int32_t op;         // ReduceOp as the caller asked, or -1
    int32_t dtype;
    int32_t root;       // or -1
    uint64_t bytes;     // per rank
  };

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
  struct Layout;
  // One exchange: copies this rank's `bytes` at `mine` (may be null) into its slot with the
  // call's description, waits until every rank has done the same, and returns the round
  // whose slots (slot(r, round)) may now be read.
  uint64_t exchange(const Call& call, const void* mine, size_t bytes);
  char* slot(int r, uint64_t round) const;
  // Rounds over `in` (every rank's data of one shape): rank `reducer`, or every rank for -1,
  // writes the reduction (in rank order) to `out`.
  void reduce_rounds(const Call& c, ReduceOp op, const Tensor& in, char* out, int reducer);
  // Polls until ready() holds: up to the group's timeout, failing early if another rank
  // gave up or died. waiting_for() names what is awaited (for errors).
  template <class Ready, class Describe>
  void await(Ready ready, Describe waiting_for);
  void check_peers(const std::string& waiting_for);
  // Runs an operation's body on the worker (`collective`: counted in the calls' sequence
  // numbers; send/recv are not); an error marks this rank failed for the others and the
  // group unusable.
  template <class Body>
  WorkPtr run(const CallInfo& call, std::vector<Tensor> outputs, bool collective, Body body);
  // What a collective's slots start with, compared across ranks.
  static Call header(const CallInfo& call);

  SharedMemory segment_;
  Layout* layout_ = nullptr;
  size_t chunk_bytes_;
  uint64_t round_ = 0;                 // the worker's last round
  uint64_t collectives_run_ = 0;       // collectives the worker has started (send/recv not counted)
  std::string failed_;        // set on the worker once a collective has failed
  std::string pid_namespace_; // peers in the same one are checked for being alive
};

}  // namespace gr::distributed
