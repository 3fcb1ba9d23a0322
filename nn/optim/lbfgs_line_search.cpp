// The strong-Wolfe line search of torch.optim.lbfgs (_cubic_interpolate, _strong_wolfe),
// with the same bracketing, zoom and safeguards, so LBFGS follows torch's iterates.
#include <algorithm>
#include <cmath>

#include "autograd/ops.h"
#include "nn/optim/lbfgs.h"

namespace gr::optim {

namespace {

// Minimum of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to the bounds
// (default: the interval between x1 and x2).
double cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2, double lo, double hi) {
  const double d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2);
  const double d2_square = d1 * d1 - g1 * g2;
  if (d2_square < 0) return (lo + hi) / 2.;
  const double d2 = std::sqrt(d2_square);
  const double min_pos = x1 <= x2 ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
                                  : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
  return std::min(std::max(min_pos, lo), hi);
}

double cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2) {
  return cubic_interpolate(x1, f1, g1, x2, f2, g2, std::min(x1, x2), std::max(x1, x2));
}

}  // namespace

LineSearchResult strong_wolfe(const std::function<std::pair<double, Tensor>(double)>& evaluate, double t,
                              const Tensor& d, double f, const Tensor& g, double gtd, double tolerance_change,
                              double c1, double c2, int64_t max_ls) {
  const double d_norm = d.abs().max().item<double>();
  auto [f_new, g_new] = evaluate(t);
  int64_t evals = 1;
  double gtd_new = gr::dot(g_new, d).item<double>();
  double t_prev = 0, f_prev = f, gtd_prev = gtd;
  Tensor g_prev = g;
  bool done = false;
  int64_t ls_iter = 0;
  // Bracket: up to two points (step, loss, gradient, directional derivative).
  std::vector<double> bt, bf, bgtd;
  std::vector<Tensor> bg;
  while (ls_iter < max_ls) {
    if (f_new > f + c1 * t * gtd || (ls_iter > 1 && f_new >= f_prev)) {
      bt = {t_prev, t}, bf = {f_prev, f_new}, bg = {g_prev, g_new}, bgtd = {gtd_prev, gtd_new};
      break;
    }
    if (std::abs(gtd_new) <= -c2 * gtd) {
      bt = {t}, bf = {f_new}, bg = {g_new}, bgtd = {gtd_new};
      done = true;
      break;
    }
    if (gtd_new >= 0) {
      bt = {t_prev, t}, bf = {f_prev, f_new}, bg = {g_prev, g_new}, bgtd = {gtd_prev, gtd_new};
      break;
    }
    // Extrapolate.
    const double min_step = t + 0.01 * (t - t_prev), max_step = t * 10, tmp = t;
    t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, min_step, max_step);
    t_prev = tmp;
    f_prev = f_new;
    g_prev = g_new;
    gtd_prev = gtd_new;
    std::tie(f_new, g_new) = evaluate(t);
    ++evals;
    gtd_new = gr::dot(g_new, d).item<double>();
    ++ls_iter;
  }
  if (ls_iter == max_ls) bt = {0, t}, bf = {f, f_new}, bg = {g, g_new}, bgtd = {gtd, gtd_new};

  // Zoom: shrink the bracket until the strong Wolfe conditions hold.
  bool insuf_progress = false;
  size_t low = bf[0] <= bf.back() ? 0 : 1, high = 1 - low;
  while (!done && ls_iter < max_ls) {
    if (std::abs(bt[1] - bt[0]) * d_norm < tolerance_change) break;
    t = cubic_interpolate(bt[0], bf[0], bgtd[0], bt[1], bf[1], bgtd[1]);
    const double hi = std::max(bt[0], bt[1]), lo = std::min(bt[0], bt[1]), eps = 0.1 * (hi - lo);
    if (std::min(hi - t, t - lo) < eps) {
      if (insuf_progress || t >= hi || t <= lo) {
        t = std::abs(t - hi) < std::abs(t - lo) ? hi - eps : lo + eps;
        insuf_progress = false;
      } else {
        insuf_progress = true;
      }
    } else {
      insuf_progress = false;
    }
    std::tie(f_new, g_new) = evaluate(t);
    ++evals;
    gtd_new = gr::dot(g_new, d).item<double>();
    ++ls_iter;
    if (f_new > f + c1 * t * gtd || f_new >= bf[low]) {
      bt[high] = t, bf[high] = f_new, bg[high] = g_new, bgtd[high] = gtd_new;
      low = bf[0] <= bf[1] ? 0 : 1;
      high = 1 - low;
    } else {
      if (std::abs(gtd_new) <= -c2 * gtd) {
        done = true;
      } else if (gtd_new * (bt[high] - bt[low]) >= 0) {
        bt[high] = bt[low], bf[high] = bf[low], bg[high] = bg[low], bgtd[high] = bgtd[low];
      }
      bt[low] = t, bf[low] = f_new, bg[low] = g_new, bgtd[low] = gtd_new;
    }
  }
  return {bf[low], bg[low], bt[low], evals};
}

}  // namespace gr::optim
