// Purpose: the test hooks that stop a rank at a named point of set-up (docs/reliability.md), so that the fault suite
// can show the other ranks end the job there instead of waiting for ever.
#pragma once

namespace mgpu {

// `variable`=R:K in the environment makes rank R stop itself (SIGSTOP) the K-th time (from 0) it passes this call
// with that variable; each variable counts its own passes. Read only when set.
void stop_here_if_asked(const char* variable, int rank);

}  // namespace mgpu
