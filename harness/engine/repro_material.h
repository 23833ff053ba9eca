// What a standalone reproducer of a kept case needs (`kprop repro`, python/kprop/repro.py):
// the tensors and scalars its implementation is handed, the cotangents, the float64
// reference's outputs and gradients with the derived bound of each element, and for a
// `layout` finding the tensor in the layout that showed it. Everything is on the CPU, as
// the case materializes it; the script carries it to the device.
#pragma once

#include <ATen/core/ivalue.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/model/named_tensors.h"
#include "harness/storage/case_file.h"

namespace kprop {

struct ReproMaterial {
  CaseFile file;
  std::string forward_schema, backward_schema;
  // The forward's and the backward's arguments, in their schema's order, as the
  // implementation is handed them (kprop's layouts, the case's dtype).
  std::vector<c10::IValue> forward_arguments, backward_arguments;
  NamedTensors reference;  // float64 outputs and gradients, by kprop's names ("y", "dx")
  NamedTensors bounds;     // per element, |implementation - exact| <= bound
  NamedTensors bounds_between_two;  // what two correct calls may differ by
  // A `layout` finding: the tensor (an input, or a cotangent "dy") in the layout its
  // identity names; none where the runner localized it to the call alone.
  struct LaidOut {
    std::string tensor, layout;
    bool cotangent = false;
    at::Tensor value;
  };
  std::optional<LaidOut> laid_out;
  // The inputs and cotangents the implementation declares it writes over (harness/execution/takes.h);
  // the script watches every other one, as kprop does.
  std::vector<std::string> overwrites;
};

// The properties whose findings a standalone script reproduces: the call alone shows them.
const std::vector<std::string>& reproducible_properties();

// "dh0 varies with dy transposed [sequence shorter than W] {..}" -> {"dy", "transposed"}:
// the tensor and layout a layout finding's identity names; a UsageError where it names none.
std::pair<std::string, std::string> layout_named_by(const std::string& identity);

// Reads case file `path` and rebuilds its material, for implementation `impl` (default:
// the case's). A file that cannot be read is a
// CaseError naming it; a property outside reproducible_properties(), or a layout symptom
// that names no layout of the case, a UsageError that says so.
ReproMaterial repro_material(const std::string& path, const std::string& impl = "");

}  // namespace kprop
