// L-BFGS with PyTorch's update, history and optional strong-Wolfe line search. It needs a
// closure that re-evaluates the model: step(closure) calls it several times.
#pragma once

#include <optional>
#include <string>

#include "nn/optim/optimizer.h"
#include "nn/options.h"

namespace gr::optim {

struct LBFGSOptions : public OptimizerCloneableOptions<LBFGSOptions> {
  LBFGSOptions(double lr = 1) : lr_(lr) {}
  void visit(const Visitor& f) override;
  GR_ARG(double, lr);
  GR_ARG(int64_t, max_iter) = 20;
  GR_ARG(std::optional<int64_t>, max_eval) = std::nullopt;  // max_iter * 5 / 4 when unset
  GR_ARG(double, tolerance_grad) = 1e-7;
  GR_ARG(double, tolerance_change) = 1e-9;
  GR_ARG(int64_t, history_size) = 100;
  GR_ARG(std::optional<std::string>, line_search_fn) = std::nullopt;  // none or "strong_wolfe"
};

class LBFGS : public Optimizer {
 public:
  LBFGS(std::vector<Tensor> params, const LBFGSOptions& defaults = {});
  LBFGS(std::vector<OptimizerParamGroup> param_groups, const LBFGSOptions& defaults = {});
  Tensor step(LossClosure closure) override;

 protected:
  bool state_is_flat(const std::string& name) const override { return name != "func_evals" && name != "n_iter"; }

 private:
  Tensor gather_flat_grad() const;
  void add_grad(double t, const Tensor& direction);
};

// The strong-Wolfe line search of torch.optim.lbfgs (_strong_wolfe), along `d` from step
// `t`; evaluate(t) returns the loss and flat gradient at x + t*d (and leaves x unchanged).
// Returns the loss, flat gradient and step at the accepted point; *evals counts evaluations.
struct LineSearchResult {
  double loss;
  Tensor flat_grad;
  double t;
  int64_t evals;
};
LineSearchResult strong_wolfe(const std::function<std::pair<double, Tensor>(double)>& evaluate, double t,
                              const Tensor& d, double f, const Tensor& g, double gtd, double tolerance_change,
                              double c1 = 1e-4, double c2 = 0.9, int64_t max_ls = 25);

}  // namespace gr::optim
