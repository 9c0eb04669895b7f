// Purpose: refusing to start a write the disk cannot hold: a results file cut off by a full disk in the middle of a
// run would hold a half-appended run, and HDF5 keeps trying to flush it; checking the free space first keeps the file
// valid with every completed run.
#pragma once

#include <cstdint>
#include <string>

namespace mgpu {

// Throws UsageError naming the path and both sizes when the file system holding `path` has less than `bytes` free.
void require_free_space(const std::string& path, std::uintmax_t bytes);

}  // namespace mgpu
