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
  const int64_t done = t.cases + t.known;  // as the summary counts them (format_tally)
  const double rate = done / std::max(elapsed, 1e-9);
  // Before the first case ends (a Triton kernel compiling, say) there is no rate to go by.
  const std::string left = done == 0 ? "the first case still running"
                                     : fmt::format("~{:.0f} s left", (total_ - done) / rate);
  std::string line =
      phase == "shrink"
          ? fmt::format("shrinking the failure ... {:.0f} s", elapsed)
          : fmt::format("{}/{} cases, {} failed, {} rejected, {:.0f} cases/s, {}", done, total_,
                        t.failed, t.rejected, rate, left);
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
