// Purpose: the async-signal-safe half of shutdown_signals.hpp: the handler only stores the signal number.
#include "platform/shutdown_signals.hpp"

#include <csignal>

namespace mgpu {
namespace {

volatile std::sig_atomic_t g_pending_signal = 0;

extern "C" void record_shutdown_signal(int signal_number) {
  if (g_pending_signal != 0) {
    // Asked twice: do what the signal would have done without us.
    std::signal(signal_number, SIG_DFL);
    std::raise(signal_number);
    return;
  }
  g_pending_signal = signal_number;
}

}  // namespace

void install_shutdown_signal_handlers() {
  struct sigaction action {};
  action.sa_handler = record_shutdown_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: an interrupted read or write of the results file resumes instead of failing with EINTR.
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

int pending_shutdown_signal() noexcept { return g_pending_signal; }

std::string signal_name(int signal_number) {
  if (signal_number == SIGTERM) return "SIGTERM";
  if (signal_number == SIGINT) return "SIGINT";
  return "signal " + std::to_string(signal_number);
}

}  // namespace mgpu
