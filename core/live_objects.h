// Counts of live tensor implementations, storages and autograd nodes: a debug API for finding
// reference cycles. A count that does not return to its baseline once everything built since
// is gone names a leak, without a sanitizer. See Note [Live objects].
#pragma once

#include <atomic>
#include <cstdint>
#include <iosfwd>

namespace gr {

// Note [Live objects]
// Every TensorImpl, StorageImpl and autograd::Node bumps a process-wide counter when it is made
// and drops it when it is destroyed (one relaxed atomic add each, next to a heap allocation the
// object costs anyway). Objects kept alive only by a reference cycle (a node that owns its own
// output, a hook that captures its own tensor) never come back down, so
//   LiveObjects before = live_objects();  { build, train, destroy }  CHECK(live_objects() == before);
// finds them in any build; tests/distributed/test_live_objects.cpp does that for a model trained
// with DDP, ZeRO, create_graph and custom Functions, and test_op_info.cpp for every OpInfo op.
// The counts are global: take both readings with no other thread making tensors (data loader
// workers, process group threads), and after a first warm-up of anything that caches tensors.
struct LiveObjects {
  int64_t tensor_impls = 0;    // TensorImpl: every tensor, view and detached alias
  int64_t storages = 0;        // StorageImpl: memory blocks, shared by views
  int64_t autograd_nodes = 0;  // autograd::Node: grad_fn nodes and leaves' AccumulateGrad nodes
  bool operator==(const LiveObjects&) const = default;
};
LiveObjects live_objects();
// "{tensor_impls 12, storages 9, autograd_nodes 3}"
std::ostream& operator<<(std::ostream& out, const LiveObjects& counts);

namespace detail {

enum LiveKind { kLiveTensorImpl, kLiveStorage, kLiveAutogradNode, kNumLiveKinds };
// One cache line each: threads making tensors and nodes do not contend on one line.
struct alignas(64) LiveCount {
  std::atomic<int64_t> n{0};
};
inline LiveCount live_counts[kNumLiveKinds];

// A member of each counted type: its constructors count one up, its destructor one down.
template <LiveKind K>
struct LiveCounter {
  LiveCounter() noexcept { live_counts[K].n.fetch_add(1, std::memory_order_relaxed); }
  LiveCounter(const LiveCounter&) noexcept : LiveCounter() {}
  LiveCounter& operator=(const LiveCounter&) noexcept { return *this; }
  ~LiveCounter() { live_counts[K].n.fetch_sub(1, std::memory_order_relaxed); }
};

}  // namespace detail
}  // namespace gr
