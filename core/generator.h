// Generator: a seedable random stream (Philox seed + offset) whose state can be saved and
// restored for bit-exact resume. Ops take an optional Generator*; null means the default.
#pragma once

#include <cstdint>
#include <mutex>

namespace gr {

struct GeneratorState {
  uint64_t seed = 0;
  uint64_t offset = 0;  // Philox blocks (of 4 numbers) already handed out
};

class Generator {
 public:
  explicit Generator(uint64_t seed = 67280421310721ull) : state_{seed, 0} {}

  void manual_seed(uint64_t seed);
  uint64_t seed() const;
  GeneratorState state() const;
  void set_state(GeneratorState s);
  // Reserves `blocks` Philox blocks and returns the offset of the first: callers draw
  // from [offset, offset + blocks) in any order or on any thread, deterministically.
  uint64_t reserve(uint64_t blocks);

 private:
  mutable std::mutex mutex_;
  GeneratorState state_;
};

Generator& default_generator();
// Seeds the default generator, like torch::manual_seed.
void manual_seed(uint64_t seed);

}  // namespace gr
