#include "harness/execution/session.h"

#include <ATen/Context.h>
#include <ATen/Functions.h>
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/errors.h"
#include "harness/execution/interrupt.h"

namespace kprop {

namespace {

// `name` ("cpu", "cuda", "cuda:N") as a device this libtorch reaches; `option` names the
// option in errors.
c10::Device parse_device(const std::string& option, const std::string& name) {
  c10::optional<c10::Device> parsed;
  try {
    parsed = c10::Device(name);
  } catch (const c10::Error&) {
  }
  if (!parsed || (!parsed->is_cpu() && !parsed->is_cuda()))
    throw UsageError(fmt::format("{} '{}': expected cpu, cuda or cuda:N", option, name));
  if (parsed->is_cuda()) {
    if (!at::hasCUDA())
      throw UsageError(fmt::format(
          "{} {}: this kprop's libtorch has no CUDA (build against a CUDA libtorch, "
          "README: Building against another libtorch)", option, name));
    // "cuda" is resolved to the device it names now ("cuda:0"): a tensor's device always
    // carries its index, so an index-less one never compares equal to it and a tensor
    // already there would be copied again (composition must hand the graph's own buffers).
    try {
      parsed = at::empty({0}, at::TensorOptions().device(*parsed)).device();
    } catch (const c10::Error& e) {
      throw UsageError(fmt::format("{} {}: {}", option, name, e.what_without_backtrace()));
    }
  }
  return *parsed;
}

// The open sessions, innermost last. A session normally closes innermost first; one that
// outlives an inner one (a test's fixture) is taken out wherever it stands.
std::vector<const Session*>& open_sessions() {
  static std::vector<const Session*> open;
  return open;
}

uint64_t next_id() {
  static uint64_t last = 0;
  return ++last;
}

}  // namespace

Session::Session(SessionSettings settings)
    : settings_(std::move(settings)),
      device_(parse_device("--device", settings_.device)),
      oracle_device_(settings_.oracle_device == "auto"
                         ? c10::nullopt
                         : c10::optional<c10::Device>(
                               parse_device("--oracle-device", settings_.oracle_device))),
      id_(next_id()) {
  open_sessions().push_back(this);
}

Session::~Session() {
  auto& open = open_sessions();
  open.erase(std::remove(open.begin(), open.end(), this), open.end());
}

const Session& Session::current() {
  static const Session defaults{SessionSettings{}};
  const auto& open = open_sessions();
  // The defaults themselves are the first session ever opened: skip them.
  for (auto it = open.rbegin(); it != open.rend(); ++it)
    if (*it != &defaults) return **it;
  return defaults;
}

bool Session::cutting_short() const { return settings_.cut_short_on_interrupt && interrupted(); }

}  // namespace kprop
