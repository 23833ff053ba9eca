// Where a run's time goes: the implementation under test (its calls, and for a device the
// copies back, which wait for it), the transfers of its inputs to its device, and the
// float64 reference. Process-wide counters, read by the commands that report speed.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>

namespace kprop {

class CallProfile {
 public:
  enum class Part { implementation, transfers, reference };
  static constexpr size_t kParts = 3;

  struct Totals {
    std::array<double, kParts> seconds{};
    std::array<int64_t, kParts> spans{};
    double at(Part p) const { return seconds[static_cast<size_t>(p)]; }
    int64_t count(Part p) const { return spans[static_cast<size_t>(p)]; }
  };

  static void add(Part part, double seconds);
  static Totals totals();
  static void reset();
};

// Adds the time from its construction to its end to `part`.
class ProfiledSpan {
 public:
  explicit ProfiledSpan(CallProfile::Part part)
      : part_(part), start_(std::chrono::steady_clock::now()) {}
  ~ProfiledSpan() {
    CallProfile::add(part_, std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                          start_).count());
  }
  ProfiledSpan(const ProfiledSpan&) = delete;
  ProfiledSpan& operator=(const ProfiledSpan&) = delete;

 private:
  CallProfile::Part part_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace kprop
