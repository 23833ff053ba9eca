// Calling an operator by name through the PyTorch dispatcher, boxed.
//
// Boxed calls work for every kernel whatever C++ signature it was registered with, which
// is what lets kprop test a user's shared library exactly like its own implementations.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <functional>
#include <optional>
#include <string>

namespace kprop {

// Runs `qualified_name` ("ns::op") on `stack`; afterwards the stack holds the outputs.
// Throws c10::Error when the operator is not registered or returns fewer values; what the
// operator raises passes through (as std::runtime_error when the error reader read it).
void call_boxed(const std::string& qualified_name, torch::jit::Stack& stack,
                size_t expected_outputs);

// Reads the message of an error an operator raised where the C++ exception does not carry
// it: a Python kernel's exception stays set in the interpreter (torch throws an empty
// python_error), where it must also be cleared before Python runs again. The Python entry
// installs one (python/module.cpp); it returns nothing when it has nothing to say.
using OperatorErrorReader = std::function<std::optional<std::string>()>;
void set_operator_error_reader(OperatorErrorReader reader);

// True when an operator of this name is registered.
bool has_operator(const std::string& qualified_name);

// An output that may be None: an undefined tensor then.
at::Tensor tensor_or_undefined(const c10::IValue& v);

// Loads a shared library that registers operators (TORCH_LIBRARY). Throws on failure.
void load_operator_library(const std::string& path);

}  // namespace kprop
