#include "harness/api/run_options.h"

#include <c10/util/Exception.h>
#include <fmt/format.h>

#include <cmath>

#include "core/errors.h"
#include "harness/api/entry.h"
#include "harness/execution/dispatch.h"

namespace kprop {

std::unique_ptr<Session> open_session(const RunOptions& o) {
  if (!std::isfinite(o.case_timeout) || o.case_timeout < 0.001 || o.case_timeout > 1e6)
    throw UsageError(fmt::format("--case-timeout {}: must be a number in 0.001..1e6", o.case_timeout));
  SessionSettings s;
  s.device = o.device;
  s.oracle_device = o.oracle_device;
  s.refusals = o.refusals;
  s.isolation.enabled = o.isolate;
  s.isolation.command = entry().command;  // the Python entry's worker is the Python entry again
  s.isolation.libraries = o.libraries;
  s.isolation.imports = o.imports;
  s.isolation.case_timeout_seconds = o.case_timeout;
  auto session = std::make_unique<Session>(std::move(s));  // devices checked first
  for (const auto& path : o.libraries) {
    try {
      load_operator_library(path);
    } catch (const c10::Error& e) {
      throw UsageError(e.what_without_backtrace());
    }
  }
  if (!o.imports.empty() && !entry().import_module)
    throw UsageError(fmt::format(
        "--import {}: only kprop's Python entry imports modules: python3 -m kprop ... "
        "(README: Python and Triton kernels)",
        o.imports.front()));
  for (const auto& module : o.imports) entry().import_module(module);
  return session;
}

}  // namespace kprop
