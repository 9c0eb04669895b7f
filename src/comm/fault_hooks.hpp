// Purpose: the test hooks that stop a rank at a named point of set-up (docs/reliability.md), so that the fault suite
// can show the other ranks end the job there instead of waiting for ever.
#pragma once

namespace mgpu {

// `variable`=R:K in the environment makes rank R stop itself (SIGSTOP) at occasion K: here the K-th time (from 0) it
// passes this call with that variable (each variable counts its own passes), or where the caller numbers the
// occasions itself (a sweep's configuration index), at `occasion` K. Read only when set.
void stop_here_if_asked(const char* variable, int rank);
void stop_here_if_asked(const char* variable, int rank, long occasion);

}  // namespace mgpu
