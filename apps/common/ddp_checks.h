// bench_ddp's correctness checks before timing: DDP's averaged gradients against a hand-made
// all-reduce of the local gradients, and the ranks holding the same parameters.
#pragma once

#include <gradring/gradring.h>

#include <algorithm>

#include "distributed/ddp/ddp.h"

namespace gr::apps {

// Largest relative difference between DDP's averaged gradients and the all-reduced mean of
// this rank's local (no_sync) gradients, over every parameter and rank.
template <class Model, class Ddp>
double check_gradients(Ddp& ddp, Model& model, optim::Optimizer& opt, distributed::ProcessGroup& pg, const Tensor& x,
                       const Tensor& y) {
  const TensorList params = model->parameters();
  opt.zero_grad();
  {
    auto no_sync = ddp.no_sync();
    nll_loss(ddp(x), y).backward();
  }
  TensorList want;
  for (const Tensor& p : params) {
    GR_CHECK(p.grad().defined(), "gradient check: a parameter got no gradient in the local backward");
    Tensor g = p.grad().clone();
    pg.allreduce(g)->wait();
    want.push_back(g / static_cast<double>(pg.size()));
  }
  opt.zero_grad();
  nll_loss(ddp(x), y).backward();
  double worst = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const double scale = want[i].abs().max().item<double>() + 1e-12;
    worst = std::max(worst, (params[i].grad() - want[i]).abs().max().item<double>() / scale);
  }
  Tensor t = scalar_tensor(worst, kFloat64);
  pg.allreduce(t, distributed::ReduceOp::Max)->wait();
  opt.zero_grad();
  return t.item<double>();
}

// True when every rank holds the same parameters (their sum and sum of squares, in double,
// match exactly across ranks).
inline bool parameters_agree(const TensorList& params, distributed::ProcessGroup& pg) {
  double sum = 0, sq = 0;
  for (const Tensor& p : params) {
    Tensor d = p.detach().to(kFloat64);
    sum += d.sum().item<double>();
    sq += (d * d).sum().item<double>();
  }
  Tensor hi = tensor({sum, sq}, kFloat64), lo = hi.clone();
  pg.allreduce(hi, distributed::ReduceOp::Max)->wait();
  pg.allreduce(lo, distributed::ReduceOp::Min)->wait();
  return hi.equal(lo);
}

}  // namespace gr::apps
