// L-BFGS step: torch.optim.LBFGS.step, line by line (two-loop recursion over the history,
// first step scaled by 1/|g|_1, optional strong-Wolfe search in lbfgs_line_search.cpp).
#include "nn/optim/lbfgs.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "nn/optim/sharded_parameters.h"

namespace gr::optim {

namespace {

double abs_max(const Tensor& a) { return a.abs().max().item<double>(); }

}  // namespace

void LBFGSOptions::visit(const Visitor& f) {
  field(f, "lr", lr_);
  field(f, "max_iter", max_iter_);
  field(f, "max_eval", max_eval_);
  field(f, "tolerance_grad", tolerance_grad_);
  field(f, "tolerance_change", tolerance_change_);
  field(f, "history_size", history_size_);
  // The only line search is strong_wolfe: 1 names it, NaN means none.
  double search = line_search_fn_ ? 1.0 : std::numeric_limits<double>::quiet_NaN();
  f("line_search_fn", search);
  line_search_fn_ = std::isnan(search) ? std::nullopt : std::optional<std::string>("strong_wolfe");
}

LBFGS::LBFGS(std::vector<Tensor> params, const LBFGSOptions& defaults)
    : LBFGS(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

LBFGS::LBFGS(std::vector<OptimizerParamGroup> param_groups, const LBFGSOptions& o)
    : Optimizer("LBFGS", std::move(param_groups), o.clone()) {
  GR_CHECK(this->param_groups().size() == 1, "LBFGS doesn't support per-parameter options (parameter groups)");
  require_whole_parameters("LBFGS", this->param_groups()[0].params());  // Note [Sharded parameters]
  GR_CHECK(o.lr() >= 0, "LBFGS: invalid learning rate: ", o.lr());
  GR_CHECK(o.max_iter() > 0, "LBFGS: max_iter must be positive, got ", o.max_iter());
  GR_CHECK(o.history_size() > 0, "LBFGS: history_size must be positive, got ", o.history_size());
  GR_CHECK(!o.line_search_fn() || *o.line_search_fn() == "strong_wolfe", "LBFGS: only 'strong_wolfe' is supported, got '",
           o.line_search_fn().value_or(""), "'");
}

Tensor LBFGS::gather_flat_grad() const {
  std::vector<Tensor> views;
  for (const Tensor& p : param_groups()[0].params())
    views.push_back(p.grad().defined() ? p.grad().reshape({-1}) : zeros({p.numel()}, p.options()));
  return cat(views, 0);
}

void LBFGS::add_grad(double t, const Tensor& direction) {
  int64_t offset = 0;
  for (Tensor& p : param_groups()[0].params()) {
    p.add_(direction.slice(0, offset, offset + p.numel()).reshape(p.sizes()), t);
    offset += p.numel();
  }
}

Tensor LBFGS::step(LossClosure closure) {
  GR_CHECK(closure != nullptr, "LBFGS.step: a closure that re-evaluates the model is required");
  NoGradGuard no_grad;
  OptimizerParamGroup& group = param_groups()[0];
  const LBFGSOptions& o = options_of<LBFGSOptions>(group);
  const double lr = o.lr(), tolerance_grad = o.tolerance_grad(), tolerance_change = o.tolerance_change();
  const int64_t max_iter = o.max_iter(), max_eval = o.max_eval().value_or(max_iter * 5 / 4);
  const size_t history_size = static_cast<size_t>(o.history_size());

  // All state lives with the first parameter, as in torch; read it into locals.
  OrderedDict<Tensor>& state = this->state(group.params()[0]);
  auto scalar = [&](const char* name, double fallback) {
    const Tensor* t = state.find(name);
    return t ? t->item<double>() : fallback;
  };
  double func_evals = scalar("func_evals", 0), n_iter_total = scalar("n_iter", 0);
  Tensor d = state.contains("d") ? state["d"] : Tensor();
  Tensor prev_flat_grad = state.contains("prev_flat_grad") ? state["prev_flat_grad"] : Tensor();
  double t = scalar("t", 0), H_diag = scalar("H_diag", 1), prev_loss = scalar("prev_loss", 0);
  std::vector<Tensor> old_dirs, old_stps;
  std::vector<double> ro;
  for (size_t i = 0; state.contains("old_dirs." + std::to_string(i)); ++i) {
    old_dirs.push_back(state["old_dirs." + std::to_string(i)]);
    old_stps.push_back(state["old_stps." + std::to_string(i)]);
    ro.push_back(state["ro." + std::to_string(i)].item<double>());
  }

  Tensor orig_loss = run_closure(closure);
  double loss = orig_loss.item<double>();
  int64_t current_evals = 1;
  func_evals += 1;
  Tensor flat_grad = gather_flat_grad();
  bool opt_cond = abs_max(flat_grad) <= tolerance_grad;
  if (opt_cond) return orig_loss;

  int64_t n_iter = 0;
  while (n_iter < max_iter) {
    ++n_iter;
    ++n_iter_total;
    if (n_iter_total == 1) {
      d = -flat_grad;
      old_dirs.clear();
      old_stps.clear();
      ro.clear();
      H_diag = 1;
    } else {
      Tensor y = flat_grad - prev_flat_grad;
      Tensor s = d * t;
      const double ys = gr::dot(y, s).item<double>();
      if (ys > 1e-10) {
        if (old_dirs.size() == history_size) {
          old_dirs.erase(old_dirs.begin());
          old_stps.erase(old_stps.begin());
          ro.erase(ro.begin());
        }
        old_dirs.push_back(y);
        old_stps.push_back(s);
        ro.push_back(1.0 / ys);
        H_diag = ys / gr::dot(y, y).item<double>();
      }
      // Two-loop recursion: d = -H g.
      const size_t num_old = old_dirs.size();
      std::vector<double> al(num_old);
      Tensor q = -flat_grad;
      for (size_t k = num_old; k-- > 0;) {
        al[k] = gr::dot(old_stps[k], q).item<double>() * ro[k];
        q.add_(old_dirs[k], -al[k]);
      }
      d = q * H_diag;
      for (size_t k = 0; k < num_old; ++k) {
        const double be_i = gr::dot(old_dirs[k], d).item<double>() * ro[k];
        d.add_(old_stps[k], al[k] - be_i);
      }
    }
    prev_flat_grad = flat_grad.clone();
    prev_loss = loss;
    t = n_iter_total == 1 ? std::min(1.0, 1.0 / flat_grad.abs().sum().item<double>()) * lr : lr;
    const double gtd = gr::dot(flat_grad, d).item<double>();
    if (gtd > -tolerance_change) break;

    int64_t ls_func_evals = 0;
    if (o.line_search_fn()) {
      std::vector<Tensor> x_init;
      for (const Tensor& p : group.params()) x_init.push_back(p.clone());
      auto evaluate = [&](double step) {
        add_grad(step, d);
        double f = run_closure(closure).item<double>();
        Tensor g = gather_flat_grad();
        for (size_t i = 0; i < x_init.size(); ++i) group.params()[i].copy_(x_init[i]);
        return std::make_pair(f, g);
      };
      LineSearchResult r = strong_wolfe(evaluate, t, d, loss, flat_grad, gtd, tolerance_change);
      loss = r.loss;
      flat_grad = r.flat_grad;
      t = r.t;
      ls_func_evals = r.evals;
      add_grad(t, d);
      opt_cond = abs_max(flat_grad) <= tolerance_grad;
    } else {
      add_grad(t, d);
      if (n_iter != max_iter) {
        loss = run_closure(closure).item<double>();
        flat_grad = gather_flat_grad();
        opt_cond = abs_max(flat_grad) <= tolerance_grad;
        ls_func_evals = 1;
      }
    }
    current_evals += ls_func_evals;
    func_evals += static_cast<double>(ls_func_evals);

    if (n_iter == max_iter || current_evals >= max_eval || opt_cond) break;
    if (abs_max(d * t) <= tolerance_change) break;
    if (std::abs(loss - prev_loss) < tolerance_change) break;
  }

  OrderedDict<Tensor> next;
  next.insert("func_evals", scalar_tensor(func_evals, kFloat64));
  next.insert("n_iter", scalar_tensor(n_iter_total, kFloat64));
  if (d.defined()) next.insert("d", d);
  next.insert("t", scalar_tensor(t, kFloat64));
  next.insert("H_diag", scalar_tensor(H_diag, kFloat64));
  if (prev_flat_grad.defined()) next.insert("prev_flat_grad", prev_flat_grad);
  next.insert("prev_loss", scalar_tensor(prev_loss, kFloat64));
  for (size_t i = 0; i < old_dirs.size(); ++i) {
    next.insert("old_dirs." + std::to_string(i), old_dirs[i]);
    next.insert("old_stps." + std::to_string(i), old_stps[i]);
    next.insert("ro." + std::to_string(i), scalar_tensor(ro[i], kFloat64));
  }
  state = std::move(next);
  return orig_loss;
}

}  // namespace gr::optim
