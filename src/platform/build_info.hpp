// Purpose: the project version and the git revision the binary was built from (defined in a generated file).
#pragma once

namespace mgpu {
const char* project_version();
const char* git_revision();
}  // namespace mgpu
