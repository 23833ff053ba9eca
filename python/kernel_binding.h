// kprop.Kernel's C++ side: a kernel declared from Python registered as a KernelSpec.
#pragma once

#include <pybind11/pybind11.h>

namespace kprop::python {

// Registers the kernel `description` describes (python/kprop/kernel.py writes it); false
// when a kernel of that name exists. Throws kprop::UsageError naming the kernel and the
// field for a bad declaration.
bool register_python_kernel(const pybind11::dict& description);

}  // namespace kprop::python
