// Reduction: how a loss combines its per-element values (none, mean or sum).
#pragma once

namespace gr {

enum class Reduction { None, Mean, Sum };
constexpr Reduction kNone = Reduction::None;
constexpr Reduction kMean = Reduction::Mean;
constexpr Reduction kSum = Reduction::Sum;

}  // namespace gr
