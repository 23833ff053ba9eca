#include "harness/engine/property.h"

#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <regex>

#include "core/errors.h"
#include "core/registry.h"
#include "harness/execution/interrupt.h"
#include "harness/execution/isolation.h"
#include "harness/execution/session.h"
#include "harness/execution/takes.h"

namespace kprop {

namespace {
Registry<Property>& properties() {
  static Registry<Property> all("property", "properties");
  return all;
}
}  // namespace

bool register_property(std::unique_ptr<Property> property) {
  return properties().add(std::move(property));
}

Verdict open_verdict(const Kernel& kernel, const Case& c) {
  Verdict v;
  v.kernel = kernel.name();
  v.impl = c.impl;
  v.property = c.property;
  return v;
}

std::vector<std::string> property_names() { return properties().names(); }

const Property& find_property(const std::string& name) { return properties().find(name); }

Target resolve_target(const std::string& kernel, const std::string& implementation,
                      const std::string& property) {
  Target t;
  t.kernel = &find_kernel(kernel);
  t.implementation = resolve_implementation(kernel, implementation);
  t.property = &find_property(property);
  t.builtin = is_builtin_implementation(kernel, t.implementation.name);
  return t;
}

Target target_of(const Case& c) { return resolve_target(c.kernel, c.impl, c.property); }

std::optional<std::string> platform_refusal(const std::string& message) {
  static const std::regex missing_kernel(R"re("[^"]+" not implemented for '[^']+')re");
  std::smatch m;
  if (std::regex_search(message, m, missing_kernel)) return m[0].str();
  return std::nullopt;
}

std::optional<std::string> declared_refusal(const Target& target, const Case& c,
                                            const std::string& message) {
  if (auto reason = platform_refusal(message)) return reason;
  if (target.builtin) {
    auto reason = target.kernel->refusal(c, c.impl);
    if (reason && message.find(*reason) != std::string::npos) return reason;
    return std::nullopt;
  }
  for (const auto& text : Session::current().refusals())
    if (message.find(text) != std::string::npos) return text;
  return std::nullopt;
}

std::optional<std::string> declared_refusal(const Case& c, const std::string& message) {
  return declared_refusal(target_of(c), c, message);
}

Verdict evaluate(const Target& target, const Case& c) {
  const Kernel& kernel = *target.kernel;
  const auto problems = validate(kernel.schema(), c);
  if (!problems.empty())
    throw CaseError(fmt::format("impossible case: {}", fmt::join(problems, "; ")));
  // Valid but too large to materialize (a --set, a decoded or hand-made case): refused
  // with the limit named, never an out-of-memory.
  refuse_too_large(kernel.schema(), c, "case");
  const Session& session = Session::current();
  if (session.cutting_short()) {
    Verdict v = open_verdict(kernel, c);
    v.status = Verdict::Status::skipped;
    v.message = fmt::format("not run: interrupted by {}", interrupt_name());
    return v;
  }
  // Outside what the implementation declares it takes: not run, never a failure.
  if (const auto reason = not_taken(c, !target.property->adapts_dtype())) {
    Verdict v = open_verdict(kernel, c);
    v.status = Verdict::Status::skipped;
    v.message = std::string(kNotTaken) + *reason;
    return v;
  }
  if (session.isolation().enabled && !target.builtin) return evaluate_isolated(c);
  try {
    return target.property->check(kernel, target.implementation, c);
  } catch (const ImplementationRefused& e) {
    if (declared_refusal(target, c, e.what())) {
      // A refusal it declares, as the real kernel raises on such a case.
      Verdict v = open_verdict(kernel, c);
      v.status = Verdict::Status::rejected;
      v.message = e.what();
      return v;
    }
    // Anything else it raises is a failure: a kernel that throws on a case it should
    // take is as broken as one that computes the wrong values.
    return fault_verdict(c, Fault{Fault::Kind::raised, e.what()});
  }
}

Verdict evaluate(const Case& c) { return evaluate(target_of(c), c); }

}  // namespace kprop
