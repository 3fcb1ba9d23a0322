// The Reducer's part of DDP's join(): a rank out of data mirrors the collectives of an
// iteration of the ranks still training, with zero gradients (DistributedDataParallel::join
// drives it, one shadow iteration per iteration of the others).
#include "core/native/copy/copy.h"
#include "distributed/ddp/reducer.h"

namespace gr::distributed {

void Reducer::shadow_iteration() {
  reset_iteration_state();
  for (Bucket& b : buckets_) {
    native::fill_(b.buffer, 0);
    b.pending = 0;
  }
  for (size_t k = 0; k < buckets_.size(); ++k) launch(k);
  for (size_t k = 0; k < buckets_.size(); ++k)
    wait_for(buckets_[k].work, *group_, "DistributedDataParallel",
             "a joined rank's shadow all-reduce of bucket " + std::to_string(k));
  if (used_work_)
    wait_for(used_work_, *group_, "DistributedDataParallel",
             "a joined rank's shadow all-reduce of the used-parameter map");
  reset_iteration_state();
  end_iteration();
}

}  // namespace gr::distributed
