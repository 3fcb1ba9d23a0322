// Generator state handling.
#include "core/generator.h"

namespace gr {

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard lock(mutex_);
  state_ = {seed, 0};
}
uint64_t Generator::seed() const {
  std::lock_guard lock(mutex_);
  return state_.seed;
}
GeneratorState Generator::state() const {
  std::lock_guard lock(mutex_);
  return state_;
}
void Generator::set_state(GeneratorState s) {
  std::lock_guard lock(mutex_);
  state_ = s;
}
uint64_t Generator::reserve(uint64_t blocks) {
  std::lock_guard lock(mutex_);
  uint64_t first = state_.offset;
  state_.offset += blocks;
  return first;
}

Generator& default_generator() {
  static Generator g;
  return g;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace gr
