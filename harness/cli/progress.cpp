#include "harness/cli/progress.h"

#include <fmt/format.h>
#include <unistd.h>

namespace kprop {

ProgressLine::ProgressLine(int64_t total_cases)
    : total_(total_cases),
      terminal_(isatty(fileno(stderr))),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

void ProgressLine::update(const Tally& t, const std::string& phase) {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double since_last = std::chrono::duration<double>(now - last_).count();
  if (elapsed < 1.0 || since_last < (terminal_ ? 0.1 : 2.0)) return;
  last_ = now;
  const double rate = t.cases / std::max(elapsed, 1e-9);
  std::string line =
      phase == "shrink"
          ? fmt::format("shrinking the failure ... {:.0f} s", elapsed)
          : fmt::format("{}/{} cases, {} failed, {} rejected, {:.0f} cases/s, ~{:.0f} s left",
                        t.cases, total_, t.failed, t.rejected, rate,
                        (total_ - t.cases) / std::max(rate, 1e-9));
  if (terminal_)
    fmt::print(stderr, "\r\033[K{}", line);
  else
    fmt::print(stderr, "{}\n", line);
  shown_ = true;
}

void ProgressLine::finish() {
  if (shown_ && terminal_) fmt::print(stderr, "\r\033[K");
  shown_ = false;
}

}  // namespace kprop
