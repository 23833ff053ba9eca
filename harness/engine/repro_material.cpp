// `kprop repro`'s material: the case rebuilt as the property's first call sees it.
#include "harness/engine/repro_material.h"

#include <algorithm>
#include <regex>

#include "core/errors.h"
#include "harness/engine/properties/calls.h"
#include "harness/execution/implementations.h"
#include "harness/execution/layout_variants.h"
#include "harness/execution/takes.h"
#include "harness/spec/kernel_spec.h"
#include "harness/spec/operator_signature.h"

namespace kprop {

const std::vector<std::string>& reproducible_properties() {
  static const std::vector<std::string> names = {"vs_reference", "layout"};
  return names;
}

// A layout's name is one word ("transposed", "stride-0"); what follows it is the bound,
// the region ("[sequence shorter than W]") or the case's values ("{..}").
std::pair<std::string, std::string> layout_named_by(const std::string& identity) {
  static const std::regex varies("varies with (\\S+) ([^\\s,{\\[]+)");
  std::smatch m;
  if (!std::regex_search(identity, m, varies))
    throw UsageError("repro: the layout finding's identity names no tensor and layout "
                     "(\"... varies with TENSOR LAYOUT\"): " + identity);
  return {m[1], m[2]};
}

namespace {

std::vector<c10::IValue> arguments(const KernelSpec& spec, const std::string& schema, bool backward,
                                   const Problem& p, const NamedTensors& cotangents) {
  const OperatorSignature signature(spec, schema, backward);
  return signature.stack_for(p, cotangents);
}

}  // namespace

ReproMaterial repro_material(const std::string& path, const std::string& impl) {
  ReproMaterial m;
  m.file = read_case_file(path);
  const Case& c = m.file.c;
  const auto& props = reproducible_properties();
  if (std::find(props.begin(), props.end(), c.property) == props.end())
    throw UsageError(path + ": case.property: repro writes scripts for " + props[0] + " and " +
                     props[1] + " findings, not " + c.property +
                     " (its symptom needs more than one call of the kernel alone)");
  const Kernel& kernel = find_kernel(c.kernel);
  const KernelSpec& spec = kernel.declaration();
  m.forward_schema = spec.forward_schema;
  if (const Takes* takes = declared_takes(c.kernel, impl.empty() ? c.impl : impl))
    m.overwrites = takes->overwrites;
  m.backward_schema = spec.backward_schema;

  const Problem p = kernel.materialize(c);
  Verdict unused;
  const Implementation reference = resolve_implementation(c.kernel, "reference");
  const Calls calls(kernel, reference, unused);
  // The cotangents follow the outputs' shapes alone: the reference's serve.
  const NamedTensors exact_outputs = kernel.forward(reference.op_namespace,
                                                    Kernel::in_dtype(p, DType::float64));
  const NamedTensors cot = random_cotangents(kernel, p, exact_outputs);
  m.reference = calls.reference(p, cot);
  m.bounds = kernel.error_bounds(p, cot, m.reference, /*joined_partials=*/{0});
  m.bounds_between_two = kernel.error_bounds(p, cot, m.reference, {0, 0});
  m.forward_arguments = arguments(spec, m.forward_schema, false, p, {});
  m.backward_arguments = arguments(spec, m.backward_schema, true, p, cot);

  // A layout finding the runner localized to the call alone (its identity names no layout:
  // harness/engine/diagnosis.h) is the call's own defect, shown as vs_reference shows it.
  const std::string& symptom = m.file.identity.empty() ? m.file.signature : m.file.identity;
  if (c.property == "layout" && symptom.find("varies with ") != std::string::npos) {
    const auto [tensor, layout] = layout_named_by(symptom);
    const bool cotangent = !p.inputs.has(tensor);
    const at::Tensor t = cotangent ? cot.get(tensor) : p.inputs.get(tensor);
    if (!t.defined())
      throw UsageError(path + ": identity: no input or cotangent " + tensor + " in this case");
    for (const auto& l : layout_variants(kernel, tensor, t, cotangent))
      if (l.name == layout) m.laid_out = ReproMaterial::LaidOut{tensor, layout, cotangent, l.make(t)};
    if (!m.laid_out)
      throw UsageError(path + ": identity: " + tensor + " has no layout " + layout + " here");
  }
  return m;
}

}  // namespace kprop
