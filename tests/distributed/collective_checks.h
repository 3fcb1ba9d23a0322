// Checks of every collective with closed-form expected values (rank r contributes r + 1),
// run inside each rank of a group; a mismatch throws gr::Error naming the collective,
// dtype and rank. Shared by the Gloo tests (spawned ranks) and the MPI check (mpirun).
#pragma once

#include <gradring/gradring.h>

#include "distributed/backends/init.h"
#include "compare.h"
#include "distributed/backends/process_group.h"

namespace gr::test {

inline void expect_equal(const Tensor& got, const Tensor& want, const std::string& what, int rank) {
  const double err = max_abs_diff(got, want);  // shapes must match; NaN fails
  GR_CHECK(err <= 1e-6 * (1 + want.to(kFloat64).abs().max().item<double>()), what, " on rank ", rank, ": wrong result (max error ",
           err, ")\ngot:\n", got, "\nwant:\n", want);
}

inline void check_collectives(distributed::ProcessGroup& pg) {
  using distributed::ReduceOp;
  const int r = pg.rank(), n = pg.size();
  const double rr = r + 1;  // this rank's contribution
  const double sum = n * (n + 1) / 2.0;
  double prod = 1;
  for (int k = 1; k <= n; ++k) prod *= k;

  for (ScalarType t : {kFloat32, kFloat64, kInt64, kBFloat16}) {
    std::string name = std::string(dtype_name(t));
    struct Case {
      ReduceOp op;
      double want;
    };
    std::vector<Case> cases = {{ReduceOp::Sum, sum}, {ReduceOp::Min, 1}, {ReduceOp::Max, static_cast<double>(n)},
                               {ReduceOp::Product, prod}};
    if (t != kInt64) cases.push_back({ReduceOp::Avg, sum / n});
    for (const Case& c : cases) {
      Tensor x = full({5, 3}, rr, t);
      pg.allreduce(x, c.op)->wait();
      expect_equal(x, full({5, 3}, c.want, kFloat64), "allreduce " + name + " " + reduce_op_name(c.op), r);
    }
  }
  // A large all-reduce (several Gloo segments) with a per-element pattern.
  {
    Tensor x = arange(3000000, kFloat32) * static_cast<float>(rr);
    pg.allreduce(x)->wait();
    expect_equal(x, arange(3000000, kFloat64) * sum, "large allreduce", r);
  }
  for (int root = 0; root < n; ++root) {
    Tensor x = full({7}, rr, kFloat64);
    pg.broadcast(x, root)->wait();
    expect_equal(x, full({7}, root + 1.0, kFloat64), "broadcast from " + std::to_string(root), r);
  }
  {
    std::vector<Tensor> outs;
    for (int k = 0; k < n; ++k) outs.push_back(empty({2, 2}, kInt64));
    pg.allgather(outs, full({2, 2}, static_cast<int64_t>(rr), kInt64))->wait();
    for (int k = 0; k < n; ++k) expect_equal(outs[k], full({2, 2}, k + 1.0, kFloat64), "allgather", r);
  }
  {
    std::vector<Tensor> ins;
    for (int k = 0; k < n; ++k) ins.push_back(full({4}, rr * (k + 1), kFloat32));  // slot k: (r+1)(k+1)
    Tensor out = empty({4}, kFloat32);
    pg.reduce_scatter(out, ins, ReduceOp::Sum)->wait();
    expect_equal(out, full({4}, sum * (r + 1), kFloat64), "reduce_scatter", r);
    for (int k = 0; k < n; ++k) expect_equal(ins[k], full({4}, rr * (k + 1), kFloat64), "reduce_scatter's inputs, unchanged", r);
    pg.reduce_scatter(out, ins, ReduceOp::Max)->wait();
    expect_equal(out, full({4}, n * (r + 1.0), kFloat64), "reduce_scatter max", r);
  }
  {
    // Large and per-element: rank rr's slot k holds k * 1e6 + i + rr (several Gloo messages).
    const int64_t len = 1000003;
    std::vector<Tensor> ins;
    for (int k = 0; k < n; ++k) ins.push_back(arange(len, kFloat64) + (k * 1e6 + rr));
    Tensor out = empty({len}, kFloat64);
    pg.reduce_scatter(out, ins, ReduceOp::Sum)->wait();
    expect_equal(out, arange(len, kFloat64) * n + (n * r * 1e6 + sum), "large reduce_scatter", r);
    std::vector<Tensor> outs;
    for (int k = 0; k < n; ++k) outs.push_back(empty({len}, kFloat64));
    pg.allgather(outs, arange(len, kFloat64) + rr * 1e6)->wait();
    for (int k = 0; k < n; ++k) expect_equal(outs[k], arange(len, kFloat64) + (k + 1) * 1e6, "large allgather", r);
  }
  for (int root = 0; root < n; ++root) {
    Tensor x = full({3}, rr, kFloat32);
    pg.reduce(x, root, ReduceOp::Sum)->wait();
    if (r == root) expect_equal(x, full({3}, sum, kFloat64), "reduce to " + std::to_string(root), r);
  }
  pg.barrier()->wait();
  {
    // A ring of send/recv: everyone sends to the next rank and receives from the previous.
    if (n > 1) {
      Tensor out = full({6}, rr, kFloat64), in = empty({6}, kFloat64);
      int next = (r + 1) % n, prev = (r + n - 1) % n;
      auto s = r % 2 == 0 ? pg.send(out, next, 7) : pg.recv(in, prev, 7);
      s->wait();
      auto t = r % 2 == 0 ? pg.recv(in, prev, 7) : pg.send(out, next, 7);
      t->wait();
      expect_equal(in, full({6}, prev + 1.0, kFloat64), "send/recv", r);
    }
  }
  {
    // Several collectives in flight: issued together, completed in order.
    std::vector<Tensor> xs;
    std::vector<distributed::WorkPtr> works;
    for (int k = 0; k < 8; ++k) {
      xs.push_back(full({100}, rr * (k + 1), kFloat32));
      works.push_back(pg.allreduce(xs.back()));
    }
    for (int k = 0; k < 8; ++k) {
      works[k]->wait();
      expect_equal(xs[k], full({100}, sum * (k + 1), kFloat64), "overlapping allreduce " + std::to_string(k), r);
    }
  }
  // Argument errors are reported before anything is sent.
  bool threw = false;
  try {
    Tensor strided = zeros({4, 4}).t();
    pg.allreduce(strided);
  } catch (const gr::Error&) {
    threw = true;
  }
  GR_CHECK(threw, "allreduce of a non-contiguous tensor should fail on rank ", r);
}

// On rank `rank` of a 4-rank default group: new_group({1, 3}) and new_group({0, 2}), each
// rank a member of one (null from the other), an all-reduce in each, then one in the default
// group (the groups do not disturb each other).
inline void check_odd_even_groups(int rank) {
  using namespace distributed;
  ProcessGroupPtr odd = new_group({1, 3});
  ProcessGroupPtr even = new_group({0, 2});
  ProcessGroupPtr mine = rank % 2 ? odd : even;
  GR_CHECK(mine && mine->size() == 2 && mine->rank() == rank / 2, "rank ", rank, ": wrong subgroup");
  GR_CHECK(!(rank % 2 ? even : odd), "rank ", rank, " got a group it is not in");
  Tensor x = full({4}, rank + 1.0, kFloat32);
  mine->allreduce(x)->wait();
  const double want = rank % 2 ? 2 + 4 : 1 + 3;
  GR_CHECK(x[0].item<double>() == want, "rank ", rank, ": subgroup sum ", x[0].item<double>(), " != ", want);
  Tensor y = full({4}, 1.0, kFloat32);
  default_group()->allreduce(y)->wait();
  GR_CHECK(y[0].item<double>() == 4, "rank ", rank, ": default group sum ", y[0].item<double>());
}

}  // namespace gr::test
