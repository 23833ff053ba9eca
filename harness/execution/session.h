// A Session: what one run of kprop holds for its whole length, and nothing outside it
// does. Where outside implementations run (--device) and the float64 oracle (--oracle-
// device), the refusals they declare (--refusal), whether their cases run in worker
// processes (harness/execution/isolation.h), and whether an interrupt cuts evaluation
// short (harness/execution/interrupt.h).
//
// A command opens one for its length (harness/api/run_options.h): the engine below reads
// the innermost open session (Session::current()), so a test or a library that opens its
// own gets its own settings and, when it closes, the outer ones back. With none open, the
// defaults hold: everything in-process, on the CPU, no refusal, nothing cut short.
#pragma once

#include <c10/core/Device.h>
#include <c10/util/Optional.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kprop {

inline constexpr double kDefaultCaseTimeoutSeconds = 20;

struct IsolationSettings {
  bool enabled = false;
  // What starts kprop, before its `__worker` arguments: {executable, args...}; empty: this
  // process's own executable.
  std::vector<std::string> command;
  std::vector<std::string> libraries;  // what every worker loads first, in this order
  std::vector<std::string> imports;    // then the Python modules it imports (Python entry)
  double case_timeout_seconds = kDefaultCaseTimeoutSeconds;  // per case, request to answer
  double start_timeout_seconds = 120;  // for a worker to load its libraries
};

struct SessionSettings {
  std::string device = "cpu";          // where the outside implementations run
  std::string oracle_device = "auto";  // where the float64 oracle runs
  // What outside implementations declare they refuse: an error whose message holds one of
  // these texts is a refusal (harness/engine/property.h). None: every error is a failure.
  std::vector<std::string> refusals;
  IsolationSettings isolation;
  bool cut_short_on_interrupt = false;
};

class Session {
 public:
  // Parses the devices (a UsageError naming --device or --oracle-device) and opens.
  explicit Session(SessionSettings settings);
  ~Session();  // closes: the session opened before it is current again
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // The innermost open session; the defaults when none is open.
  static const Session& current();

  const SessionSettings& settings() const { return settings_; }
  const IsolationSettings& isolation() const { return settings_.isolation; }
  const std::vector<std::string>& refusals() const { return settings_.refusals; }
  const c10::Device& device() const { return device_; }
  // The --oracle-device chosen; none: "auto" (beside the implementation, or the CPU for a
  // small problem: harness/execution/device.h).
  const c10::optional<c10::Device>& oracle_device() const { return oracle_device_; }

  // While on, an interrupt turns every further evaluate() into a "skipped" verdict at once
  // (harness/engine/property.h): a shrink in progress then ends with the best case it has,
  // and a search stops drawing. Switch it off before writing findings, whose expectations
  // need real verdicts.
  void cut_short_on_interrupt(bool on) { settings_.cut_short_on_interrupt = on; }
  bool cutting_short() const;  // interrupted() while cut_short_on_interrupt is on

  // Distinct for every session of the process: a worker started for one is not another's.
  uint64_t id() const { return id_; }

 private:
  SessionSettings settings_;
  c10::Device device_;
  c10::optional<c10::Device> oracle_device_;
  uint64_t id_;
};

}  // namespace kprop
