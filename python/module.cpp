// kprop._kprop: kprop's command line (harness/cli/entry.h) inside a Python interpreter.
//
// kprop/__init__.py imports torch first, then this module, and calls main(): the C++
// command line runs with the GIL released, so that the Python kernels it calls through
// the dispatcher take it themselves (torch's Python kernels acquire it), and --import
// takes it to import a module.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <dlfcn.h>
#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "generators/errors.h"
#include "harness/cli/entry.h"
#include "kernels/common/dispatch.h"

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
// cleared, so that Python runs on (kernels/common/dispatch.h: the error reader).
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

int main(std::vector<std::string> args, std::vector<std::string> worker_command) {
  kprop::Entry entry;
  entry.name = "python3 -m kprop";
  entry.command = std::move(worker_command);
  entry.import_module = import_module;
  kprop::set_entry(std::move(entry));
  py::gil_scoped_release release;
  return kprop::run_cli(args);
}

}  // namespace

PYBIND11_MODULE(_kprop, m) {
  m.doc() = "kprop's command line (kprop.main runs it; python3 -m kprop)";
  make_kprop_global();
  kprop::set_operator_error_reader(python_kernel_error);
  m.def("main", &main, py::arg("args"), py::arg("worker_command"),
        "Runs one kprop command line (args[0] is the program's name) and returns its exit "
        "code; isolation workers are started as worker_command + ['__worker', ...].");
}
