// OptimizerFactory: how the distributed optimizers (ZeroRedundancyOptimizer, DDP's optimizer in
// backward and gradient sharding) build the optimizers they run on their own parameters, as
// torch's `optimizer_class` plus `**defaults`: optimizer_class<optim::Adam>(optim::AdamOptions(1e-3)).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "nn/optim/optimizer.h"

namespace gr::distributed {

using OptimizerFactory =
    std::function<std::unique_ptr<optim::Optimizer>(std::vector<optim::OptimizerParamGroup> groups)>;

template <class O, class Options>
OptimizerFactory optimizer_class(const Options& defaults) {
  return [defaults](std::vector<optim::OptimizerParamGroup> groups) -> std::unique_ptr<optim::Optimizer> {
    return std::make_unique<O>(std::move(groups), defaults);
  };
}

}  // namespace gr::distributed
