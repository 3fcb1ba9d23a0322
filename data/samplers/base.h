// torch::data's Sampler: hands out the index batches of one epoch, one next() at a time;
// reset() starts an epoch. AnySampler holds a sampler chosen at run time.
#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

namespace gr::data::samplers {

// Note [Sampler epochs]
// A sampler's order in epoch e is a pure function of its settings and e: set_epoch(e) picks
// the epoch the next reset() starts, and gradring's loader calls set_epoch(e) and reset()
// before every epoch e (libtorch's loader never calls set_epoch, so its distributed samplers
// shuffle alike every epoch). So any epoch can be replayed (resume from a snapshot: its
// position is the epoch and the batches done, Note [Exact resume] in apps/train_mnist.cpp),
// and every thread or rank computes the same order without talking to the others.
// RandomSampler shuffles with a seed (given, or drawn from the default generator when it is
// made); the distributed samplers as torch.utils.data.DistributedSampler does (Note
// [DistributedSampler order]); SequentialSampler and ShardSampler ignore the epoch.

template <typename BatchRequest = std::vector<size_t>>
class Sampler {
 public:
  using BatchRequestType = BatchRequest;

  virtual ~Sampler() = default;
  // Starts over (an epoch), optionally for a dataset of `new_size` examples.
  virtual void reset(std::optional<size_t> new_size) = 0;
  // The next batch of at most `batch_size` indices; nothing once the epoch is over.
  virtual std::optional<BatchRequest> next(size_t batch_size) = 0;
  // The epoch the next reset() starts (gradring; see the Note). By default the order does
  // not depend on the epoch.
  virtual void set_epoch(size_t epoch) {}
};

// A sampler chosen at run time (gradring): owns any Sampler<BatchRequest> and forwards to it,
// so that one loader type serves RandomSampler on one process and DistributedRandomSampler on
// several, say.
template <typename BatchRequest = std::vector<size_t>>
class AnySampler : public Sampler<BatchRequest> {
 public:
  template <typename S>
    requires std::derived_from<S, Sampler<BatchRequest>> && (!std::same_as<S, AnySampler>)
  /* implicit */ AnySampler(S sampler) : sampler_(std::make_unique<S>(std::move(sampler))) {}

  void reset(std::optional<size_t> new_size = std::nullopt) override { sampler_->reset(new_size); }
  std::optional<BatchRequest> next(size_t batch_size) override { return sampler_->next(batch_size); }
  void set_epoch(size_t epoch) override { sampler_->set_epoch(epoch); }
  Sampler<BatchRequest>& get() const { return *sampler_; }

 private:
  std::unique_ptr<Sampler<BatchRequest>> sampler_;
};

namespace detail {
// Positions [index, min(index + batch_size, end)) of `all`, advancing `index`; nothing at
// the end. `who` names the sampler in the error for batch_size 0.
std::optional<std::vector<size_t>> take(const std::vector<size_t>& all, size_t& index, size_t end, size_t batch_size,
                                        const char* who);
}  // namespace detail

}  // namespace gr::data::samplers
