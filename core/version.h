// gradring's version and build facts (whether the CUDA backend was compiled in).
#pragma once

namespace gr {

constexpr int kVersionMajor = 0;
constexpr int kVersionMinor = 1;
constexpr int kVersionPatch = 0;
constexpr const char* kVersion = "0.1.0";

// True when this build contains the CUDA backend (a device may still be absent).
bool built_with_cuda();
// Number of usable CUDA devices (0 without the backend or without a device).
int cuda_device_count();
bool cuda_is_available();

}  // namespace gr
