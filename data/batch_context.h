// What a data loader tells the code that makes one batch, on the thread that makes it: the
// batch's own generator (batch_generator) and whether to allocate it page-locked; and the
// row gather that Stack uses on datasets of tensor rows. See Note [Batch determinism].
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "core/generator.h"
#include "data/example.h"

namespace gr::data {

// Note [Batch determinism]
// Batch k of epoch e holds dataset.get_batch(request k), where the requests are the index
// batches the sampler hands out after set_epoch(e) and reset(), all drawn on the consumer's
// thread before any worker starts; it is made on a dataset copy whose epoch is e (when the
// dataset has set_epoch), with batch_generator() seeded from (options.seed, e, k) alone.
// Workers only decide *when* a batch is made, never what it holds: the batches are identical
// for any number of workers, and any batch of any epoch can be made again (exact resume).

// The generator random transforms draw from: while a loader makes a batch on this thread,
// the batch's own (see the Note); elsewhere the default generator.
Generator& batch_generator();

namespace detail {

// The seed of batch `index` of `epoch` for a loader seeded with `seed` (splitmix64 mixing).
uint64_t batch_seed(uint64_t seed, int64_t epoch, int64_t index);

// While alive, this thread is making batch `index` of `epoch`: batch_generator() is the
// batch's, and batch_pinned() says `pin`. Scopes nest (the previous one comes back).
class BatchScope {
 public:
  BatchScope(uint64_t seed, int64_t epoch, int64_t index, bool pin);
  BatchScope(const BatchScope&) = delete;
  BatchScope& operator=(const BatchScope&) = delete;
  ~BatchScope();

 private:
  Generator generator_;
  Generator* previous_generator_;
  bool previous_pin_;
};

// Whether the batch being made on this thread goes to page-locked memory (the loader's
// pin_memory, and a CUDA device exists). A dataset that allocates the final batch itself (the
// row gather below) allocates it there; the loader pins whatever is not (a copy).
bool batch_pinned();

// While alive, batch_pinned() is false: a transform is about to make new tensors of what the
// inner dataset returns, so pinning the inner batch would be wasted.
class NoPinScope {
 public:
  NoPinScope();
  NoPinScope(const NoPinScope&) = delete;
  NoPinScope& operator=(const NoPinScope&) = delete;
  ~NoPinScope();

 private:
  bool saved_;
};

// Whether a loader with pin_memory pins: true with a CUDA device; without one it prints one
// notice (once per process) and says false.
bool pin_batches(bool requested);

// Note [Row gather]
// A dataset whose examples are the rows of two tensors (MNIST, CIFAR10, TensorDataset) says
// so with rows(); Stack over it (dataset.map(Stack<>())) then copies each batch's rows with
// one memcpy each, straight into the batch (page-locked when batch_pinned()), instead of a
// view per example and a stack. The bytes are those stacking get(i) gives. Rows on a device,
// or not contiguous, take the ordinary path: nothing is returned.
std::optional<Example<>> gather_rows(const Example<>& rows, std::span<const size_t> indices);

}  // namespace detail

}  // namespace gr::data
