// The registered checks for sharded parameters and the error of an optimizer that needs whole
// ones: Note [Sharded parameters].
#include "nn/optim/sharded_parameters.h"

#include <mutex>

#include "core/error.h"

namespace gr::optim {

namespace {
struct ShardedChecks {
  std::mutex mutex;
  std::vector<ShardedParameterCheck> checks;
};
ShardedChecks& sharded_checks() {
  static ShardedChecks* c = new ShardedChecks();  // never destroyed: optimizers may outlive static destruction
  return *c;
}
}  // namespace

void register_sharded_parameter_check(ShardedParameterCheck check) {
  ShardedChecks& c = sharded_checks();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.checks.push_back(std::move(check));
}

void require_whole_parameters(const std::string& optimizer, const std::vector<Tensor>& params) {
  std::vector<ShardedParameterCheck> checks;
  {
    ShardedChecks& c = sharded_checks();
    std::lock_guard<std::mutex> lock(c.mutex);
    checks = c.checks;
  }
  for (size_t i = 0; i < params.size(); ++i)
    for (const ShardedParameterCheck& check : checks) {
      const std::string shard_of = check(params[i]);
      GR_CHECK(shard_of.empty(), optimizer, " needs every parameter whole (its steps and line search span every element "
               "of every parameter), but parameter ", i, " is this rank's shard of ", shard_of, ". Use an element-wise "
               "optimizer (SGD, Adam, AdamW, Adagrad, RMSprop, ...) on sharded parameters.");
    }
}

}  // namespace gr::optim
