// Purpose: the free-space check of disk_space.hpp.
#include "results/disk_space.hpp"

#include <filesystem>

#include "platform/error.hpp"

namespace mgpu {

void require_free_space(const std::string& path, std::uintmax_t bytes) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path parent = fs::absolute(fs::path(path), error).parent_path();
  const fs::space_info space = fs::space(parent, error);
  if (error) return;  // a file system that cannot say: the write itself reports a failure
  if (space.available >= bytes) return;
  throw UsageError("'" + path + "': the disk is full (" + std::to_string(space.available / 1024) +
                   " KiB free, the next run needs about " + std::to_string(bytes / 1024) + " KiB)");
}

}  // namespace mgpu
