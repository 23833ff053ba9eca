#include "harness/engine/replay.h"

#include <fmt/format.h>

#include "core/errors.h"
#include "harness/engine/property.h"
#include "harness/execution/implementations.h"
#include "harness/model/kernel.h"
#include "harness/storage/fingerprint.h"

namespace kprop {

bool ReplayResult::as_recorded() const {
  if (!fingerprint_matches || !signature_matches) return false;
  for (const auto& r : runs)
    if (!r.as_expected()) return false;
  return true;
}

namespace {

// An implementation the file names must exist: an unknown one would replay as a verdict
// nobody checked ("rejected" matching a recorded "rejected").
void need_implementation(const CaseFile& f, const std::string& name, const std::string& field) {
  try {
    resolve_implementation(f.c.kernel, name);
  } catch (const UsageError& e) {
    throw CaseError(fmt::format("{}: {}: {}", f.path, field, e.what()));
  }
}

}  // namespace

ReplayResult replay(const CaseFile& f, const std::string& impl, bool builtin_only) {
  // Outside implementations that will not run need not be at hand; built-in names must exist.
  const bool outside_run = impl.empty() && !builtin_only;
  const auto need = [&](const std::string& name, const std::string& field) {
    if (outside_run || !is_outside_implementation_name(f.c.kernel, name))
      need_implementation(f, name, field);
  };
  need(f.c.impl, "case.impl");
  for (const auto& [name, status] : f.expect)
    need(name, "expect." + (name.size() > 40 ? name.substr(0, 40) + "..." : name));
  refuse_too_large(find_kernel(f.c.kernel).schema(), f.c, f.path + ": case");
  ReplayResult r;
  r.file = f;
  r.fingerprint = inputs_fingerprint(find_kernel(f.c.kernel).materialize(f.c));
  r.fingerprint_matches = f.inputs_fingerprint.empty() || r.fingerprint == f.inputs_fingerprint;
  std::vector<std::string> impls;
  if (!impl.empty()) {
    impls.push_back(impl);
  } else {
    for (const auto& [name, status] : f.expect)
      if (!builtin_only || is_builtin_implementation(f.c.kernel, name)) impls.push_back(name);
    if (impls.empty())
      throw CaseError(fmt::format("{}: expect: no {}implementation to replay", f.path,
                                  builtin_only ? "built-in " : ""));
  }
  for (const auto& name : impls) {
    Case c = f.c;
    c.impl = name;
    ImplementationReplay run{name, evaluate(c), std::nullopt};
    if (auto it = f.expect.find(name); it != f.expect.end()) run.expected = it->second;
    if (name == f.c.impl && run.verdict.failed()) {
      // A recorded failing case must say which failure: an empty signature checks nothing.
      if (f.signature.empty() && !f.expect.empty())
        throw CaseError(fmt::format(
            "{}: signature: empty, but the case fails on {} with signature '{}'", f.path,
            name, run.verdict.signature()));
      r.signature_matches = f.signature.empty() || run.verdict.signature() == f.signature;
    }
    r.runs.push_back(std::move(run));
  }
  return r;
}

}  // namespace kprop
