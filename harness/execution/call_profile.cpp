#include "harness/execution/call_profile.h"

#include <mutex>

namespace kprop {

namespace {
std::mutex& lock() {
  static std::mutex m;
  return m;
}
CallProfile::Totals& state() {
  static CallProfile::Totals t;
  return t;
}
}  // namespace

void CallProfile::add(Part part, double seconds) {
  std::lock_guard<std::mutex> guard(lock());
  state().seconds[static_cast<size_t>(part)] += seconds;
  ++state().spans[static_cast<size_t>(part)];
}

CallProfile::Totals CallProfile::totals() {
  std::lock_guard<std::mutex> guard(lock());
  return state();
}

void CallProfile::reset() {
  std::lock_guard<std::mutex> guard(lock());
  state() = Totals{};
}

}  // namespace kprop
