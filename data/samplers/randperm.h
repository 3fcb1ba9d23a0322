// The permutations of the seeded samplers: torch's CPU randperm bit for bit (what
// torch.utils.data.DistributedSampler shuffles with), and the per-epoch seed rule.
#pragma once

#include <cstdint>
#include <vector>

namespace gr::data::samplers {

// The generator seed for shuffling epoch `epoch`: seed + epoch, as torch's DistributedSampler.
uint64_t epoch_seed(uint64_t seed, int64_t epoch);

// torch.randperm(n, generator=torch.Generator().manual_seed(seed)) on CPU, bit for bit:
// a Mersenne Twister (mt19937, seeded with the low 32 bits of `seed`) driving torch's
// Fisher-Yates variants (for n < 2^32 / 20 a forward swap with a 32-bit draw modulo n - i,
// beyond that the "inside-out" shuffle with 64-bit draws).
std::vector<int64_t> torch_randperm(int64_t n, uint64_t seed);

}  // namespace gr::data::samplers
