// kprop._kprop: kprop's engine (harness/api/) and command line (harness/cli/entry.h) inside
// a Python interpreter.
//
// kprop/__init__.py imports torch first, then this module, and calls main(): the C++
// command line runs with the GIL released, so that the Python kernels it calls through
// the dispatcher take it themselves (torch's Python kernels acquire it), and --import
// takes it to import a module.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <dlfcn.h>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "harness/api/check.h"
#include "harness/api/hunt.h"
#include "harness/api/replay.h"
#include "harness/cli/check_text.h"
#include "harness/cli/hunt_text.h"
#include "harness/cli/entry.h"
#include "harness/execution/dispatch.h"
#include "harness/execution/takes.h"
#include "harness/spec/kernel_spec.h"
#include "python/kernel_binding.h"
#include "python/repro_binding.h"

namespace py = pybind11;

namespace {

// importlib.import_module(name); a Python error is bad usage (exit 2) that names it, as
// Python's last line says it ("ModuleNotFoundError: No module named 'x'").
void import_module(const std::string& name) {
  py::gil_scoped_acquire gil;
  try {
    py::module_::import("importlib").attr("import_module")(name);
  } catch (py::error_already_set& e) {
    const py::object lines =
        py::module_::import("traceback").attr("format_exception_only")(e.type(), e.value());
    std::string what = py::str("").attr("join")(lines).cast<std::string>();
    while (!what.empty() && what.back() == '\n') what.pop_back();
    throw kprop::UsageError(fmt::format("--import {}: {}", name, what));
  }
}

// The exception a Python kernel raised: torch leaves it set in the interpreter and throws an
// empty python_error through the dispatcher. Its last line and where it was raised, e.g.
// "ValueError: W = 3 is too wide (raised at my_ops.py:23 in forward)"; the error is
// cleared, so that Python runs on (harness/execution/dispatch.h: the error reader).
std::optional<std::string> python_kernel_error() {
  py::gil_scoped_acquire gil;
  if (!PyErr_Occurred()) return std::nullopt;
  py::error_already_set e;  // takes the error out of the interpreter
  const py::module_ traceback = py::module_::import("traceback");
  std::string what =
      py::str("").attr("join")(traceback.attr("format_exception_only")(e.type(), e.value()))
          .cast<std::string>();
  while (!what.empty() && what.back() == '\n') what.pop_back();
  if (e.trace() && !e.trace().is_none()) {
    const py::list frames = traceback.attr("extract_tb")(e.trace());
    if (!frames.empty()) {
      const py::object last = frames[frames.size() - 1];
      const py::object file = py::module_::import("os").attr("path").attr("basename")(last.attr("filename"));
      what += fmt::format(" (raised at {}:{} in {})", file.cast<std::string>(),
                          last.attr("lineno").cast<int>(), last.attr("name").cast<std::string>());
    }
  }
  return what;
}

// Plugins loaded with --load resolve kprop's symbols (register_kernel, ...) from the
// process's global scope; Python loaded this module and libkprop.so into a local one.
void make_kprop_global() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&kprop::run_cli), &info) && info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
}

// The entry every call from Python runs under: named as the command line's, its isolation
// workers this interpreter again, --import its modules.
void enter(std::vector<std::string> worker_command, std::function<void(const std::string&)> result) {
  kprop::Entry entry;
  entry.name = "python3 -m kprop";
  entry.command = std::move(worker_command);
  entry.import_module = import_module;
  entry.result = std::move(result);
  kprop::set_entry(std::move(entry));
}

// Runs one command line; the command's result (its --json form) is handed to `result`.
int run(std::vector<std::string> args, std::vector<std::string> worker_command,
        std::function<void(const std::string&)> result) {
  enter(std::move(worker_command), std::move(result));
  py::gil_scoped_release release;
  return kprop::run_cli(args);
}

int main(std::vector<std::string> args, std::vector<std::string> worker_command) {
  return run(std::move(args), std::move(worker_command), nullptr);
}

// (exit code, the command's result as JSON text, "" when it gives none).
std::pair<int, std::string> run_for_result(std::vector<std::string> args,
                                           std::vector<std::string> worker_command) {
  std::string json;
  const int code = run(std::move(args), std::move(worker_command),
                       [&json](const std::string& text) { json = text; });
  return {code, json};
}

// A report's JSON value as the Python value it is, in memory (no text between them).
py::object python_of(const nlohmann::json& j) {
  using Type = nlohmann::json::value_t;
  switch (j.type()) {
    case Type::boolean: return py::bool_(j.get<bool>());
    case Type::number_integer: return py::int_(j.get<int64_t>());
    case Type::number_unsigned: return py::int_(j.get<uint64_t>());
    case Type::number_float: return py::float_(j.get<double>());
    case Type::string: return py::str(j.get_ref<const std::string&>());
    case Type::array: {
      py::list out;
      for (const auto& v : j) out.append(python_of(v));
      return std::move(out);
    }
    case Type::object: {
      py::dict out;
      for (const auto& [k, v] : j.items()) out[py::str(k)] = python_of(v);
      return std::move(out);
    }
    default: return py::none();
  }
}

// kprop.check's engine call (harness/api/check.h): the request's fields as keywords, the
// report as {"exit_code", "stopped", "report"} (the report as `check --json` gives it).
// `echo`: print what `kprop check` prints, its plan first and its report last.
py::dict check(const kprop::CheckRequest& request, std::vector<std::string> worker_command,
               bool echo) {
  enter(std::move(worker_command), nullptr);
  kprop::CheckReport report;
  {
    py::gil_scoped_release release;
    kprop::CheckCallbacks callbacks;
    if (echo) callbacks.on_start = kprop::print_check_plan;
    report = kprop::check(request, callbacks);
    if (echo) kprop::print_check_report(request, report);
  }
  py::dict out;
  out["exit_code"] = report.exit_code;
  out["stopped"] = report.stopped;
  out["report"] = python_of(kprop::to_json(report));
  return out;
}

// kprop.replay's engine call (harness/api/replay.h): {exit_code, files}, each file
// {path, ok, error, report} (report: as `replay --json` gives it; None for a bad file).
py::dict replay(const kprop::ReplayRequest& request, std::vector<std::string> worker_command) {
  enter(std::move(worker_command), nullptr);
  kprop::ReplayReport report;
  {
    py::gil_scoped_release release;
    report = kprop::replay_files(request);
  }
  py::list files;
  for (const auto& f : report.files) {
    py::dict d;
    d["path"] = f.path;
    d["ok"] = f.ok;
    d["error"] = f.error;
    d["report"] = f.result ? python_of(kprop::to_json(*f.result)) : py::none();
    files.append(d);
  }
  py::dict out;
  out["exit_code"] = report.exit_code;
  out["files"] = files;
  return out;
}

// kprop.hunt's engine call (harness/api/hunt.h): {exit_code, hunts} (the hunts as
// `hunt --json` gives them). `echo`: print each hunt as `kprop hunt` does.
py::dict hunt(const kprop::HuntRequest& request, std::vector<std::string> worker_command,
              bool echo) {
  enter(std::move(worker_command), nullptr);
  kprop::HuntReport report;
  {
    py::gil_scoped_release release;
    kprop::HuntCallbacks callbacks;
    if (echo) callbacks.on_hunt = [&](const kprop::Hunt& h) { kprop::print_hunt(h, request.cases); };
    report = kprop::hunt(request, callbacks);
  }
  py::dict out;
  out["exit_code"] = report.exit_code;
  out["hunts"] = python_of(kprop::to_json(report));
  return out;
}

// What the Python API needs to register an implementation of `kernel` through autograd:
// the operator schemas and the names of its inputs and outputs in them.
py::dict kernel_tensors(const std::string& name) {
  const kprop::Kernel& kernel = kprop::find_kernel(name);
  const kprop::KernelSpec& spec = kernel.declaration();
  auto describe = [](const std::vector<kprop::TensorSpec>& tensors) {
    py::list out;
    for (const auto& t : tensors) {
      py::dict d;
      d["name"] = t.name;
      d["argument"] = t.argument.empty() ? t.name : t.argument;
      d["differentiable"] = t.differentiable;
      out.append(d);
    }
    return out;
  };
  py::dict d;
  d["forward_schema"] = spec.forward_schema;
  d["backward_schema"] = spec.backward_schema;
  d["inputs"] = describe(spec.inputs);
  d["outputs"] = describe(spec.outputs);
  return d;
}

void declare_takes(const std::string& kernel, const std::string& impl,
                   const std::vector<std::string>& dtypes, const std::vector<std::string>& devices,
                   const std::map<std::string, std::pair<int64_t, int64_t>>& ranges,
                   const std::map<std::string, std::vector<std::string>>& choices,
                   const std::map<std::string, bool>& flags,
                   const std::vector<std::string>& overwrites,
                   const std::vector<std::string>& layouts, bool layout_changes_reduction_order,
                   bool nondeterministic, const std::string& same_function_as) {
  kprop::Takes t;
  for (const auto& d : dtypes) {
    const auto dtype = kprop::parse_dtype(d);
    if (!dtype)
      throw kprop::UsageError("kernel " + kernel + ", implementation " + impl +
                              ": takes dtypes: unknown dtype '" + d + "'");
    t.dtypes.push_back(*dtype);
  }
  t.devices = devices;
  for (const auto& [name, r] : ranges) t.ranges[name] = {r.first, r.second};
  t.choices = choices;
  t.flags = flags;
  t.overwrites = overwrites;
  t.layouts = layouts;
  t.layout_changes_reduction_order = layout_changes_reduction_order;
  t.nondeterministic = nondeterministic;
  t.same_function_as = same_function_as;
  kprop::declare_takes(kernel, impl, std::move(t));
}

}  // namespace

PYBIND11_MODULE(_kprop, m) {
  m.doc() = "kprop's engine and command line (kprop.check, ...; kprop.main runs a command line)";
  make_kprop_global();
  py::register_exception<kprop::UsageError>(m, "UsageError", PyExc_ValueError);
  py::register_exception<kprop::CaseError>(m, "CaseError", PyExc_ValueError);
  kprop::set_operator_error_reader(python_kernel_error);
  m.def("main", &main, py::arg("args"), py::arg("worker_command"),
        "Runs one kprop command line (args[0] is the program's name) and returns its exit "
        "code; isolation workers are started as worker_command + ['__worker', ...].");
  m.def("run_for_result", &run_for_result, py::arg("args"), py::arg("worker_command"),
        "Runs one command line; returns (exit code, its result as JSON text).");
  py::class_<kprop::RunOptions>(m, "RunOptions", "What every run is given (harness/api/run_options.h).")
      .def(py::init<>())
      .def_readwrite("libraries", &kprop::RunOptions::libraries)
      .def_readwrite("imports", &kprop::RunOptions::imports)
      .def_readwrite("device", &kprop::RunOptions::device)
      .def_readwrite("oracle_device", &kprop::RunOptions::oracle_device)
      .def_readwrite("refusals", &kprop::RunOptions::refusals)
      .def_readwrite("case_timeout", &kprop::RunOptions::case_timeout)
      .def_readwrite("isolate", &kprop::RunOptions::isolate);
  m.def(
      "check",
      [](const std::string& kernel, const std::string& impl, int64_t cases, uint64_t seed,
         std::vector<std::string> properties, std::vector<std::string> dtypes,
         std::vector<std::string> set, std::vector<std::string> limits, bool shrink,
         double shrink_seconds, const std::string& corpus, const kprop::RunOptions& run,
         bool echo, std::vector<std::string> worker_command) {
        kprop::CheckRequest q;
        q.run = run;
        q.kernel = kernel;
        q.impl = impl;
        q.cases = cases;
        q.seed = seed;
        q.properties = std::move(properties);
        q.dtypes = std::move(dtypes);
        q.set = std::move(set);
        q.limits = std::move(limits);
        q.shrink = shrink;
        q.shrink_seconds = shrink_seconds;
        q.corpus = corpus;
        q.entry_name = "python3 -m kprop";
        return check(q, std::move(worker_command), echo);
      },
      py::arg("kernel"), py::arg("impl"), py::arg("cases"), py::arg("seed"),
      py::arg("properties"), py::arg("dtypes"), py::arg("set"), py::arg("limits"),
      py::arg("shrink"), py::arg("shrink_seconds"), py::arg("corpus"), py::arg("run"),
      py::arg("echo"), py::arg("worker_command"),
      "kprop's check (harness/api/check.h): {exit_code, stopped, report}.");
  m.def(
      "replay",
      [](std::vector<std::string> paths, const std::string& impl, bool builtin_only,
         const kprop::RunOptions& run, std::vector<std::string> worker_command) {
        kprop::ReplayRequest q;
        q.run = run;
        q.paths = std::move(paths);
        q.impl = impl;
        q.builtin_only = builtin_only;
        return replay(q, std::move(worker_command));
      },
      py::arg("paths"), py::arg("impl"), py::arg("builtin_only"), py::arg("run"),
      py::arg("worker_command"),
      "kprop's replay (harness/api/replay.h): {exit_code, files}.");
  m.def(
      "hunt",
      [](const std::string& kernel, std::vector<std::string> defects, int64_t cases,
         uint64_t seed, const std::string& corpus, const kprop::RunOptions& run, bool echo,
         std::vector<std::string> worker_command) {
        kprop::HuntRequest q;
        q.run = run;
        q.kernel = kernel;
        q.defects = std::move(defects);
        q.cases = cases;
        q.seed = seed;
        q.corpus = corpus;
        return hunt(q, std::move(worker_command), echo);
      },
      py::arg("kernel"), py::arg("defects"), py::arg("cases"), py::arg("seed"), py::arg("corpus"),
      py::arg("run"), py::arg("echo"), py::arg("worker_command"),
      "kprop's hunt (harness/api/hunt.h): {exit_code, hunts}.");
  m.def("kernel_names", &kprop::kernel_names, "The registered kernels.");
  m.def("kernel_tensors", &kernel_tensors, py::arg("kernel"),
        "A kernel's operator schemas and its inputs and outputs by name.");
  m.def("declare_takes", &declare_takes, py::arg("kernel"), py::arg("impl"), py::arg("dtypes"),
        py::arg("devices"), py::arg("ranges"), py::arg("choices"), py::arg("flags"),
        py::arg("overwrites"), py::arg("layouts"), py::arg("layout_changes_reduction_order"), py::arg("nondeterministic"),
        py::arg("same_function_as") = "",
        "Declares what an implementation takes (harness/execution/takes.h).");
  m.def("register_kernel",
        [](const py::dict& d) { return kprop::python::register_python_kernel(d); },
        py::arg("description"), "Registers a kernel declared from Python (kprop.Kernel).");
  m.def("load_library", [](const std::string& path) { kprop::load_operator_library(path); },
        py::arg("path"), "Loads an operator library (as --load).");
  m.def("repro_material", &kprop::python::repro_material, py::arg("path"), py::arg("impl") = "",
        "A kept case's inputs, cotangents, float64 reference and bounds (kprop.repro).");
}
