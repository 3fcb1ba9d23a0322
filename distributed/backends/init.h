// init_process_group and friends, as torch.distributed: the default group of this process,
// made from the environment (env:// — RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, or
// SLURM's variables), from an init_method URL, or from explicit arguments.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "distributed/backends/process_group.h"
#include "distributed/store/store.h"

namespace gr::distributed {

struct InitOptions {
  std::string backend = "gloo";          // "gloo", "shm" (one machine), "mpi" (and "nccl" with CUDA)
  std::string init_method = "env://";    // env://, tcp://host:port, file:///path
  int rank = -1;                         // -1: from the environment
  int world_size = -1;                   // -1: from the environment
  std::chrono::milliseconds timeout{std::chrono::minutes(30)};  // for rendezvous and every collective
  std::shared_ptr<Store> store;          // use this store instead of init_method
};

// Where this process sits in the job, as read from the environment and the options.
struct Rendezvous {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr;  // tcp:// rendezvous
  int master_port = 0;
  std::string file;         // file:// rendezvous
  std::string source;       // "env://", "SLURM", "arguments", ... for messages
};
// Resolves rank, size and address: explicit options first, then RANK/WORLD_SIZE/
// MASTER_ADDR/MASTER_PORT, then SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID and the first host
// of SLURM_JOB_NODELIST. Bad or missing settings throw with what to set.
Rendezvous resolve_rendezvous(const InitOptions& options);

ProcessGroupPtr init_process_group(const InitOptions& options = {});
ProcessGroupPtr init_process_group(const std::string& backend);
bool is_initialized();
// The group init_process_group made (throws if there is none).
ProcessGroupPtr default_group();
int get_rank();
int get_world_size();
void destroy_process_group();
// A group of some ranks of the default group (every rank of the default group must call it,
// in the same order). Returns nullptr on ranks that are not members.
ProcessGroupPtr new_group(const std::vector<int>& ranks);

// Backends register a factory under their name. For a backend with its own rendezvous
// (uses_store = false, MPI) the store is null and rank/size are -1 for the default group.
// Otherwise rank and size are within the new group; `members` lists the default group's
// ranks in the group (all of them for the default group).
struct BackendContext {
  std::shared_ptr<Store> store;
  int rank;
  int size;
  std::vector<int> members;
  std::chrono::milliseconds timeout;
};
using BackendFactory = std::function<ProcessGroupPtr(const BackendContext&)>;
void register_backend(const std::string& name, BackendFactory factory, bool uses_store = true);
std::vector<std::string> registered_backends();

}  // namespace gr::distributed
