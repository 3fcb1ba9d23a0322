// Where a training app's process sits (one process, or rank r of a process group), how many
// threads it takes, and the few collectives the apps need for their metrics. Shared by
// train_mnist and train_gpt.
#pragma once

#include <gradring/gradring.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "device.h"
#include "distributed/backends/init.h"

namespace gr::apps {

inline int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atoi(v) : 0;
}

// Test hook of the training apps (tests/distributed/test_train_mnist_resume.sh,
// tests/apps/test_train_gpt.sh): GRADRING_TEST_KILL_AT_STEP=N makes the app SIGKILL itself
// right after step N (and after that step's snapshot), on the first attempt only
// (GRADRING_RESTART_COUNT unset or 0), on rank GRADRING_TEST_KILL_RANK if set, else on every
// rank. The step to die after, or 0.
inline int64_t test_kill_step(int rank) {
  const char* kill_rank = std::getenv("GRADRING_TEST_KILL_RANK");
  const bool here = env_int("GRADRING_RESTART_COUNT") == 0 && (kill_rank == nullptr || std::atoi(kill_rank) == rank);
  return here ? env_int("GRADRING_TEST_KILL_AT_STEP") : 0;
}

// One process (group null), or rank `rank` of `world` ranks.
struct Job {
  distributed::ProcessGroupPtr group;
  int rank = 0;
  int world = 1;
  Device device;             // where the model and the batches live
  Device collective_device;  // where the group's collectives take tensors (CUDA for NCCL)
  bool distributed() const { return group != nullptr; }
  bool leader() const { return rank == 0; }
};

// Distributed when a launcher set WORLD_SIZE (gradring-run, torchrun) or a backend was named
// (mpirun sets no WORLD_SIZE).
inline bool launched_distributed(const std::string& backend) {
  return std::getenv("WORLD_SIZE") != nullptr || !backend.empty();
}

// Picks the device (--device), the backend (empty: nccl on CUDA, else gloo) and, when
// distributed, joins the process group. Throws gr::Error for impossible combinations.
inline Job start_job(const std::string& device_spec, std::string backend, const char* app) {
  const bool distributed = launched_distributed(backend);
  Job job;
  job.device = pick_device(device_spec, app, env_int("LOCAL_RANK"), std::max(1, env_int("LOCAL_WORLD_SIZE")));
  if (job.device.is_cuda()) cuda::set_device(job.device.index());  // before any CUDA work of this rank
  if (backend.empty()) backend = job.device.is_cuda() ? "nccl" : "gloo";
  GR_CHECK(backend != "nccl" || job.device.is_cuda(), "--backend nccl needs --device cuda (NCCL reduces CUDA tensors)");
  job.collective_device = backend == "nccl" ? job.device : Device(kCPU);
  if (distributed) {
    job.group = distributed::init_process_group(backend);
    job.rank = job.group->rank();
    job.world = job.group->size();
  }
  return job;
}

// --threads, else OMP_NUM_THREADS (gradring-run sets 1 when several ranks share a node),
// else the cores divided among the ranks of this node.
inline int resolve_threads(int threads, bool distributed) {
  if (threads > 0) return threads;
  if (int omp = env_int("OMP_NUM_THREADS"); omp > 0) return omp;
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (!distributed) return cores;
  int local = std::max({1, env_int("LOCAL_WORLD_SIZE"), env_int("OMPI_COMM_WORLD_LOCAL_SIZE")});
  return std::max(1, cores / local);
}

// Element-wise reduction of a few numbers over the ranks (unchanged on one process).
inline std::vector<double> reduce(const Job& job, std::vector<double> values,
                                  distributed::ReduceOp op = distributed::ReduceOp::Sum) {
  if (!job.distributed()) return values;
  Tensor t = tensor(values, kFloat64).to(job.collective_device);
  job.group->allreduce(t, op)->wait();
  t = t.to(Device(kCPU));
  const double* p = t.data_ptr<double>();
  return std::vector<double>(p, p + values.size());
}

// Prints a gr::Error as "<app>: [rank r: ]message" on stderr.
inline void report_error(const char* app, const Job& job, const gr::Error& e) {
  if (job.distributed())
    std::fprintf(stderr, "%s: rank %d: %s\n", app, job.rank, e.message().c_str());
  else
    std::fprintf(stderr, "%s: %s\n", app, e.message().c_str());
}

}  // namespace gr::apps
