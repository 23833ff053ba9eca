#include "harness/execution/interrupt.h"

#include <signal.h>

namespace kprop {

namespace {

volatile sig_atomic_t received = 0;

void on_signal(int sig) {
  if (received != 0) {
    // The second signal: the user insists. Die as the default action would.
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  received = sig;
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocking poll() or read() returns EINTR
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool interrupted() { return received != 0; }
int interrupt_signal() { return received; }

const char* interrupt_name() {
  switch (received) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return "";
  }
}

int interrupted_exit_code() { return received != 0 ? 128 + received : 0; }
void clear_interrupt() { received = 0; }

}  // namespace kprop
