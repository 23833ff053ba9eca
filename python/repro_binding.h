// kprop.repro's C++ side: a kept case's material (harness/engine/repro_material.h) as Python values.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace kprop::python {

// {"case": the case file's JSON text, "forward_schema", "backward_schema",
//  "forward_arguments", "backward_arguments": lists in schema order (tensors, numbers,
//  strings, None), "reference", "bounds", "bounds_between_two": {name: tensor},
//  "laid_out": None or {"tensor", "layout", "cotangent", "value"},
//  "overwrites": the tensors implementation `impl` (default: the case's) declares it
//  writes over}.
// A bad file or a case repro cannot write raises ValueError with kprop's message.
pybind11::dict repro_material(const std::string& path, const std::string& impl);

}  // namespace kprop::python
