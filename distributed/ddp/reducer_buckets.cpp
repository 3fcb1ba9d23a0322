// The Reducer's bucket layout: assignment by size (Note [DDP buckets]), the flat buffers,
// the one rebuild in rank 0's observed gradient order, and the layout as text.
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "core/error.h"
#include "core/factory.h"
#include "core/native/copy/copy.h"
#include "distributed/ddp/control_tensor.h"
#include "distributed/backends/flat_buffer.h"
#include "distributed/ddp/reducer.h"

namespace gr::distributed {

namespace {

// The parameters of `params`, taken in `order`, cut per dtype and device into buckets that
// close at the size limit (the first bucket of each group at the smaller one); the buckets
// come in the order of their earliest parameter, reversed with `reverse`.
std::vector<std::vector<size_t>> assign_buckets(const TensorList& params, const std::vector<size_t>& order,
                                                const ReducerOptions& options, bool reverse) {
  struct Open {
    std::vector<size_t> params;
    int64_t bytes = 0;
    bool first = true;
  };
  std::map<std::pair<int, std::string>, Open> open;
  std::vector<std::vector<size_t>> closed;
  for (size_t i : order) {
    const Tensor& p = params[i];
    Open& o = open[{static_cast<int>(p.scalar_type()), p.device().str()}];
    o.params.push_back(i);
    o.bytes += static_cast<int64_t>(p.nbytes());
    if (o.bytes >= (o.first ? options.first_bucket_bytes : options.bucket_bytes)) {
      closed.push_back(std::move(o.params));
      o = Open{{}, 0, false};
    }
  }
  for (auto& [key, o] : open)
    if (!o.params.empty()) closed.push_back(std::move(o.params));
  // Buckets in the order of their earliest parameter, so they become ready one after another.
  std::vector<size_t> position(params.size());
  for (size_t k = 0; k < order.size(); ++k) position[order[k]] = k;
  std::sort(closed.begin(), closed.end(), [&](const auto& a, const auto& b) { return position[a[0]] < position[b[0]]; });
  if (reverse) std::reverse(closed.begin(), closed.end());
  return closed;
}

}  // namespace

void Reducer::build_buckets(const std::vector<size_t>& order, bool reverse) {
  const std::vector<std::vector<size_t>> assignment = assign_buckets(params_, order, options_, reverse);
  // Let earlier collectives finish before their buffers go away.
  for (Bucket& b : buckets_)
    if (b.work) wait_for(b.work, *group_, "DistributedDataParallel", "a bucket all-reduce");
  buckets_.clear();
  bucket_of_.assign(params_.size(), 0);
  slot_of_.assign(params_.size(), 0);
  for (size_t k = 0; k < assignment.size(); ++k) {
    Bucket b;
    b.params = assignment[k];
    int64_t elems = 0;
    for (size_t i : b.params) {
      b.offsets.push_back(elems);
      elems += params_[i].numel();
    }
    if (options_.shard_gradients) {
      const Tensor& like = params_[b.params[0]];
      b.shard.elems = (elems + group_->size() - 1) / group_->size();
      b.shard.param = zeros({b.shard.elems}, TensorOptions(like.scalar_type()).device(like.device()));
      b.shard.param.requires_grad_(true);
      b.shard.grad = zeros_like(b.shard.param);
    }
    allocate_buffer(b);
    for (size_t s = 0; s < b.params.size(); ++s) {
      const size_t i = b.params[s];
      bucket_of_[i] = k;
      slot_of_[i] = s;
      if (options_.gradient_as_bucket_view) {
        // An existing gradient moves into the bucket; from now on .grad is the bucket view.
        Tensor& grad = params_[i].mutable_grad();
        if (grad.defined()) {
          native::copy_(b.views[s], grad);
          grad = b.views[s];
        }
      }
    }
    b.pending = b.params.size();
    buckets_.push_back(std::move(b));
  }
}

void Reducer::allocate_buffer(Bucket& b) {
  TensorList like;
  for (size_t i : b.params) like.push_back(params_[i]);
  // A sharded bucket is padded to world size * shard elements (Note [Gradient sharding]).
  const int64_t used = b.offsets.back() + like.back().numel();
  const int64_t padding = options_.shard_gradients ? b.shard.elems * group_->size() - used : 0;
  if (padding > 0) like.push_back(empty({padding}, TensorOptions(like[0].scalar_type()).device(like[0].device())));
  const FlatBuffer flat(like, /*zero=*/true);
  b.buffer = flat.flat();
  b.views = flat.views();
  if (padding > 0) b.views.pop_back();
}

void Reducer::rebuild_buckets() {
  // Rank 0's observed order decides: every rank must end up with the same buckets.
  const int64_t n = static_cast<int64_t>(params_.size());
  std::vector<int64_t> order;
  if (group_->rank() == 0) {
    std::vector<char> seen(params_.size(), 0);
    for (size_t i : ready_order_)
      if (!seen[i]) {
        seen[i] = 1;
        order.push_back(static_cast<int64_t>(i));
      }
    for (size_t i = 0; i < params_.size(); ++i)  // parameters that never got a gradient last
      if (!seen[i]) order.push_back(static_cast<int64_t>(i));
  } else {
    order.assign(params_.size(), -1);
  }
  Tensor sent = control_tensor(order, params_[0].device());
  wait_for(group_->broadcast(sent, 0), *group_, "DistributedDataParallel", "the broadcast of the bucket order");
  const std::vector<int64_t> o = host_values(sent);
  std::vector<size_t> observed(params_.size());
  std::vector<char> check(params_.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    GR_CHECK(o[k] >= 0 && o[k] < n && !check[o[k]], "DistributedDataParallel: rank 0 sent an invalid bucket order");
    check[o[k]] = 1;
    observed[k] = static_cast<size_t>(o[k]);
  }
  build_buckets(observed, /*reverse=*/false);
  rebuilt_ = true;
  ready_order_.clear();
  if (ddp_info_logging()) std::fprintf(stderr, "%s", layout_string().c_str());
}

std::vector<std::vector<size_t>> Reducer::bucket_indices() const {
  std::vector<std::vector<size_t>> out;
  for (const Bucket& b : buckets_) out.push_back(b.params);
  return out;
}

// The gradients' bytes (a sharded bucket's buffer, padded, exists only during backward).
int64_t Reducer::bytes_of(const Bucket& b) const {
  int64_t bytes = 0;
  for (size_t i : b.params) bytes += static_cast<int64_t>(params_[i].nbytes());
  return bytes;
}

std::vector<int64_t> Reducer::bucket_bytes() const {
  std::vector<int64_t> out;
  for (const Bucket& b : buckets_) out.push_back(bytes_of(b));
  return out;
}

std::string Reducer::layout_string() const {
  std::ostringstream out;
  out << "[rank " << group_->rank() << "] DDP buckets" << (rebuilt_ ? " (rebuilt in the observed gradient order)" : "")
      << ": " << buckets_.size() << " bucket(s), " << params_.size() << " parameters\n";
  for (size_t k = 0; k < buckets_.size(); ++k) {
    const Bucket& b = buckets_[k];
    out << "[rank " << group_->rank() << "]   bucket " << k << ": " << bytes_of(b) << " bytes "
        << params_[b.params[0]].scalar_type() << ", " << b.params.size() << " parameter(s): " << names_of(b.params) << "\n";
  }
  return out.str();
}

std::string Reducer::names_of(const std::vector<size_t>& indices) const {
  std::string out;
  for (size_t k = 0; k < indices.size(); ++k) {
    if (k == 12 && indices.size() > 13) {
      out += ", ... (" + std::to_string(indices.size() - 12) + " more)";
      break;
    }
    out += (k ? ", " : "") + names_[indices[k]];
  }
  return out;
}

}  // namespace gr::distributed
