// Purpose: SIGTERM and SIGINT (Slurm's time limit, scancel, Ctrl-C) turned into a flag that the benchmark's bounded
// waits poll, so the job can keep its completed runs and say why it stopped instead of dying mid-write.
#pragma once

#include <string>

namespace mgpu {

// Installs the handlers (idempotent). The first SIGTERM or SIGINT only records itself; a second one of either kind
// gets the default action, so a user who insists (Ctrl-C twice) is never held up.
void install_shutdown_signal_handlers();

// The signal that asked for a shutdown (SIGTERM or SIGINT), or 0 when none has arrived.
int pending_shutdown_signal() noexcept;

// "SIGTERM", "SIGINT", else "signal N".
std::string signal_name(int signal_number);

}  // namespace mgpu
