// kprop.repro's C++ side: the material of a kept case, handed to Python.
#include "python/repro_binding.h"

#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>

#include "core/errors.h"
#include "harness/engine/repro_material.h"

namespace py = pybind11;

namespace kprop::python {

namespace {

py::object to_python(const c10::IValue& v) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    return t.defined() ? py::reinterpret_steal<py::object>(THPVariable_Wrap(t)) : py::none();
  }
  if (v.isInt()) return py::int_(v.toInt());
  if (v.isBool()) return py::bool_(v.toBool());
  if (v.isDouble()) return py::float_(v.toDouble());
  if (v.isString()) return py::str(v.toStringRef());
  if (v.isIntList()) return py::cast(v.toIntVector());
  if (v.isNone()) return py::none();
  throw UsageError("repro: an argument of type " + v.tagKind() + " has no Python form here");
}

py::list to_python(const std::vector<c10::IValue>& values) {
  py::list out;
  for (const auto& v : values) out.append(to_python(v));
  return out;
}

py::dict to_python(const NamedTensors& tensors) {
  py::dict out;
  for (const auto& [name, t] : tensors) out[py::str(name)] = to_python(c10::IValue(t));
  return out;
}

}  // namespace

py::dict repro_material(const std::string& path, const std::string& impl) {
  try {
    // The reference's backward runs torch's autograd engine, which must not hold the GIL.
    const ReproMaterial m = [&] {
      py::gil_scoped_release released;
      return kprop::repro_material(path, impl);
    }();
    py::dict d;
    d["case"] = to_json(m.file).dump();
    d["forward_schema"] = m.forward_schema;
    d["backward_schema"] = m.backward_schema;
    d["forward_arguments"] = to_python(m.forward_arguments);
    d["backward_arguments"] = to_python(m.backward_arguments);
    d["reference"] = to_python(m.reference);
    d["bounds"] = to_python(m.bounds);
    d["bounds_between_two"] = to_python(m.bounds_between_two);
    d["overwrites"] = py::cast(m.overwrites);
    if (m.laid_out) {
      py::dict l;
      l["tensor"] = m.laid_out->tensor;
      l["layout"] = m.laid_out->layout;
      l["cotangent"] = m.laid_out->cotangent;
      l["value"] = to_python(c10::IValue(m.laid_out->value));
      d["laid_out"] = l;
    } else {
      d["laid_out"] = py::none();
    }
    return d;
  } catch (const UsageError& e) {
    throw py::value_error(e.what());
  } catch (const CaseError& e) {
    throw py::value_error(e.what());
  }
}

}  // namespace kprop::python
