// kprop.Kernel: a kernel declared from Python is a KernelSpec (harness/spec/kernel_spec.h)
// like the built-in ones, so every property, shrinking, the corpus, replay and reports work
// on it. python/kprop/kernel.py turns the Python declaration into a plain description (a
// dict); this file turns that into the spec, each Python callable wrapped so that it runs
// with the GIL (the command line runs without it).
#include "python/kernel_binding.h"

#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>

#include <fmt/format.h>

#include "core/errors.h"
#include "generators/shrink.h"
#include "generators/value_steps.h"
#include "harness/spec/kernel_spec.h"

namespace py = pybind11;

namespace kprop::python {

namespace {

// A Python callable kept for the life of the process: kernels are never unregistered, and
// the interpreter is gone by the time static destructors run, so it is never released.
struct Callable {
  py::object* f;
  explicit Callable(py::object fn) : f(new py::object(std::move(fn))) {}
  template <typename... Args>
  py::object operator()(Args&&... args) const {
    return (*f)(std::forward<Args>(args)...);
  }
};

py::object to_python(const at::Tensor& t) {
  return t.defined() ? py::reinterpret_steal<py::object>(THPVariable_Wrap(t)) : py::none();
}

at::Tensor to_tensor(const py::handle& h, const std::string& what) {
  if (h.is_none()) return at::Tensor();
  if (!THPVariable_Check(h.ptr()))
    throw std::runtime_error(fmt::format("{} returned {}, not a tensor", what,
                                         py::str(py::type::of(h)).cast<std::string>()));
  return THPVariable_Unpack(h.ptr());
}

py::object scalar_to_python(const c10::IValue& v) {
  if (v.isInt()) return py::int_(v.toInt());
  if (v.isBool()) return py::bool_(v.toBool());
  if (v.isDouble()) return py::float_(v.toDouble());
  if (v.isString()) return py::str(v.toStringRef());
  if (v.isIntList()) return py::cast(v.toIntVector());
  return py::none();
}

py::dict case_to_python(const Case& c) {
  py::dict d;
  for (const auto& [name, v] : c.params)
    std::visit([&](const auto& x) { d[py::str(name)] = py::cast(x); }, v);
  d["dtype"] = to_string(c.dtype);
  return d;
}

// The result of a Python function as named tensors: a tensor (the first name), a
// sequence (in the order of `names`) or a dict by name.
NamedTensors named_results(const py::object& r, const std::vector<std::string>& names,
                           const std::string& what) {
  NamedTensors out;
  if (py::isinstance<py::dict>(r)) {
    for (const auto& [k, v] : r.cast<py::dict>()) out.set(k.cast<std::string>(), to_tensor(v, what));
    return out;
  }
  if (THPVariable_Check(r.ptr())) {
    out.set(names.at(0), to_tensor(r, what));
    return out;
  }
  const auto seq = r.cast<py::sequence>();
  if (seq.size() != names.size())
    throw std::runtime_error(fmt::format("{} returned {} values for {} outputs", what, seq.size(),
                                         names.size()));
  for (size_t i = 0; i < names.size(); ++i) out.set(names[i], to_tensor(seq[i], what));
  return out;
}

// A Python exception as a C++ one, with Python's last line (the dispatcher passes it on).
template <typename F>
auto with_gil(const std::string& what, F f) -> decltype(f()) {
  py::gil_scoped_acquire gil;
  try {
    return f();
  } catch (py::error_already_set& e) {
    throw std::runtime_error(fmt::format("{}: {}", what, e.what()));
  }
}

template <typename T>
T get(const py::dict& d, const char* key, T otherwise) {
  return d.contains(key) && !d[key].is_none() ? d[key].cast<T>() : otherwise;
}

ParamSpec param_of(const py::dict& d) {
  const auto name = d["name"].cast<std::string>();
  const auto type = d["type"].cast<std::string>();
  const auto meaning = get<std::string>(d, "meaning", name);
  if (type == "integer") {
    const auto lo = d["lo"].cast<int64_t>(), hi = d["hi"].cast<int64_t>();
    ParamSpec p = param_spec(name, ParamType::integer, meaning, get<int64_t>(d, "simplest", lo));
    p.within(lo, hi);
    if (d.contains("default") && !d["default"].is_none()) p.by_default(d["default"].cast<int64_t>());
    std::vector<IntOption> options;
    for (const auto& e : get<std::vector<std::pair<uint32_t, std::vector<int64_t>>>>(d, "edges", {}))
      options.push_back(IntOption::any_of(e.first, e.second));
    options.push_back(IntOption::range(get<uint32_t>(d, "uniform_weight", 50), lo, hi));
    p.drawn(options);
    if (const auto blocks = get<int64_t>(d, "blocks", 0)) p.shrinking(along_blocks(blocks));
    return p;
  }
  if (type == "flag") {
    ParamSpec p = param_spec(name, ParamType::flag, meaning, get<bool>(d, "simplest", false));
    p.true_in_percent(get<uint32_t>(d, "percent_true", 50));
    if (d.contains("default") && !d["default"].is_none()) p.by_default(d["default"].cast<bool>());
    return p;
  }
  if (type == "choice") {
    const auto choices = d["choices"].cast<std::vector<std::string>>();
    ParamSpec p = param_spec(name, ParamType::choice, meaning, choices.at(0));
    p.choices = choices;
    p.weights = get<std::vector<uint32_t>>(d, "weights", std::vector<uint32_t>(choices.size(), 1));
    if (d.contains("default") && !d["default"].is_none()) p.by_default(d["default"].cast<std::string>());
    return p;
  }
  throw UsageError(fmt::format("parameter {}: unknown type '{}' (integer, flag, choice)", name, type));
}

TensorSpec tensor_of(const py::dict& d) {
  TensorSpec t(d["name"].cast<std::string>(), get<std::vector<std::string>>(d, "dims", {}));
  if (const auto flag = get<std::string>(d, "when", ""); !flag.empty()) t.when_flag(flag);
  if (d.contains("neutral") && !d["neutral"].is_none()) t.neutral(d["neutral"].cast<double>());
  if (!get<bool>(d, "differentiable", true)) t.no_gradient();
  return t;
}

}  // namespace

bool register_python_kernel(const py::dict& d) {
  KernelSpec k;
  k.name = d["name"].cast<std::string>();
  for (const auto& p : d["params"]) k.params.push_back(param_of(p.cast<py::dict>()));
  if (d.contains("properties")) k.properties = d["properties"].cast<std::vector<std::string>>();
  if (d.contains("reordered_by_layout"))
    k.reordered_by_layout = d["reordered_by_layout"].cast<std::vector<std::string>>();
  if (d.contains("dtypes")) {
    k.dtypes.clear();
    for (const auto& name : d["dtypes"].cast<std::vector<std::string>>()) {
      const auto dtype = parse_dtype(name);
      if (!dtype) throw UsageError(fmt::format("kernel {}: dtypes: unknown dtype '{}'", k.name, name));
      k.dtypes.push_back(*dtype);
    }
  }
  for (const auto& t : d["inputs"]) k.inputs.push_back(tensor_of(t.cast<py::dict>()));
  for (const auto& t : d["outputs"]) k.outputs.push_back(tensor_of(t.cast<py::dict>()));
  k.operator_params = get<std::vector<std::string>>(d, "operator_params", {});
  std::vector<std::string> dims;
  for (const auto* list : {&k.inputs, &k.outputs})
    for (const auto& t : *list)
      for (const auto& dim : t.dims)
        if (std::find(dims.begin(), dims.end(), dim) == dims.end()) dims.push_back(dim);
  for (const auto& dim : dims) k.dims.push_back(param_dim(dim));

  std::vector<std::string> output_names, input_names;
  for (const auto& o : k.outputs) output_names.push_back(o.name);
  for (const auto& i : k.inputs) input_names.push_back(i.name);
  const Callable reference(d["reference"]);
  const std::string what = fmt::format("kernel {}: reference", k.name);
  // The forward's arguments only: the inputs and operator parameters by name (a backward
  // derived by autograd also holds the cotangents, which the forward does not take).
  k.reference = [reference, output_names, input_names, params = k.operator_params,
                 what](const OpArgs& a) {
    return with_gil(what, [&] {
      py::dict kwargs;
      for (const auto& name : input_names) kwargs[py::str(name)] = to_python(a[name]);
      for (const auto& name : params) kwargs[py::str(name)] = scalar_to_python(a.scalar(name));
      return named_results(reference(**kwargs), output_names, what);
    });
  };
  for (const auto& [key, value] : get<py::dict>(d, "bounds", py::dict())) {
    const auto b = value.cast<py::dict>();
    Magnitude magnitude;
    if (b.contains("magnitude") && !b["magnitude"].is_none()) {
      const Callable m(b["magnitude"]);
      const std::string where = fmt::format("kernel {}: bound of {}: magnitude", k.name, key.cast<std::string>());
      magnitude = [m, where](const Exact& e) {
        return with_gil(where, [&] {
          py::dict tensors;
          for (const auto& [name, t] : e.tensors) tensors[py::str(name)] = to_python(t);
          return to_tensor(m(tensors), where);
        });
      };
    }
    const auto kind = b["kind"].cast<std::string>();
    k.bounds[key.cast<std::string>()] =
        kind == "sum" ? Bound::sum_over(b["over"].cast<std::string>(), magnitude)
                      : Bound::elementwise(get<int>(b, "roundings", 1), magnitude);
  }
  for (const auto& [dim, fn] : get<py::dict>(d, "regions", py::dict())) {
    const Callable f(py::reinterpret_borrow<py::object>(fn));
    const std::string where = fmt::format("kernel {}: region of {}", k.name, dim.cast<std::string>());
    k.regions.push_back({dim.cast<std::string>(), [f, where](const Case& c, int64_t index) {
                           return with_gil(where, [&] { return f(case_to_python(c), index).cast<std::string>(); });
                         }});
  }
  k.default_implementation = "reference";
  return register_spec(std::move(k));
}

}  // namespace kprop::python
