// The live-object counts (Note [Live objects]) read and printed.
#include "core/live_objects.h"

#include <ostream>

namespace gr {

LiveObjects live_objects() {
  auto read = [](detail::LiveKind k) { return detail::live_counts[k].n.load(std::memory_order_relaxed); };
  return {read(detail::kLiveTensorImpl), read(detail::kLiveStorage), read(detail::kLiveAutogradNode)};
}

std::ostream& operator<<(std::ostream& out, const LiveObjects& counts) {
  return out << "{tensor_impls " << counts.tensor_impls << ", storages " << counts.storages << ", autograd_nodes "
             << counts.autograd_nodes << "}";
}

}  // namespace gr
