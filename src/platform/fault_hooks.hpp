// Purpose: the fault-injection hooks (docs/reliability.md, "Fault injection"): MGPU_FAULT_* environment variables a
// test sets to make a rank stop at a named point, a kernel spin, a product or a hash go wrong. Every hook is read here
// and only when set; none is an option.
#pragma once

namespace mgpu {

// The hook's value, or nullptr when `variable` is not set or empty.
const char* fault_hook(const char* variable);
// The hook's value as a whole number (a rank, a run), or -1 when not set or not a number.
long fault_hook_number(const char* variable);

// `variable`=R:K makes rank R stop itself (SIGSTOP) at occasion K: here the K-th time (from 0) it passes this call
// with that variable (each variable counts its own passes), or where the caller numbers the occasions itself (a
// sweep's configuration index), at `occasion` K.
void stop_here_if_asked(const char* variable, int rank);
void stop_here_if_asked(const char* variable, int rank, long occasion);

}  // namespace mgpu
