// What a kernel's operator schema strings mean in kprop's names: which argument is which
// input, cotangent or case parameter, and which return is which output or gradient. Both
// sides of a boxed call are derived from it: the harness building the stack from a
// problem, and a spec'd implementation reading its arguments off the stack.
#pragma once

#include <ATen/core/stack.h>

#include <string>
#include <vector>

#include "harness/spec/kernel_spec.h"

namespace kprop {

class OperatorSignature {
 public:
  enum class Role { input, cotangent, scalar };
  struct Argument {
    Role role;
    std::string name;     // kprop's name (tensors) or the schema's (scalars)
    std::string type;     // as the schema writes it: "Tensor", "Tensor?", "int", "str", ...
    bool optional = false;
    // A scalar from the problem (KernelSpec::arguments), else the case parameter `name`.
    const std::function<c10::IValue(const Problem&)>* derived = nullptr;
  };

  // Parses `schema` (the kernel's forward or backward); a name that matches nothing of the
  // spec is a UsageError naming the kernel, the operator and the argument. `spec` must
  // outlive the signature (its derived arguments are kept by address).
  OperatorSignature(const KernelSpec& spec, const std::string& schema, bool backward);

  const std::string& operator_name() const { return name_; }  // "scaled_tanh_fwd"
  const std::vector<Argument>& arguments() const { return arguments_; }
  const std::vector<std::string>& returns() const { return returns_; }  // kprop's names

  // Harness side: the stack for `p` (and its cotangents, in a backward), and the results.
  torch::jit::Stack stack_for(const Problem& p, const NamedTensors& cotangents) const;
  NamedTensors results(const torch::jit::Stack& stack) const;

  // Implementation side: the arguments on `stack` (popped), and the results pushed.
  OpArgs pop_arguments(torch::jit::Stack& stack) const;
  void push_results(const NamedTensors& results, torch::jit::Stack& stack) const;

 private:
  std::string name_;
  std::vector<Argument> arguments_;
  std::vector<std::string> names_;    // each argument's name, as OpArgs reads them
  std::vector<std::string> returns_;
};

}  // namespace kprop
