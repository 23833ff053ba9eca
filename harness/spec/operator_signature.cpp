#include "harness/spec/operator_signature.h"

#include <fmt/format.h>
#include <torch/csrc/jit/frontend/function_schema_parser.h>

#include <variant>

#include "core/errors.h"
#include "harness/model/random_tensor.h"

namespace kprop {

namespace {

const TensorSpec* by_schema_name(const std::vector<TensorSpec>& tensors, const std::string& name) {
  for (const auto& t : tensors)
    if (t.name == name || t.argument == name) return &t;
  return nullptr;
}

// "d" + an input's or output's name in either spelling ("dweight", "dw") -> "dw".
const TensorSpec* by_gradient_name(const std::vector<TensorSpec>& tensors,
                                   const std::string& name) {
  if (name.size() < 2 || name[0] != 'd') return nullptr;
  return by_schema_name(tensors, name.substr(1));
}

bool is_tensor_type(const std::string& type) { return type == "Tensor" || type == "Tensor?"; }

// A case parameter as the operator argument of that name; its type checked at registration.
c10::IValue parameter_value(const Case& c, const std::string& name) {
  const auto& v = c.params.at(name);
  if (const auto* i = std::get_if<int64_t>(&v)) return c10::IValue(*i);
  if (const auto* b = std::get_if<bool>(&v)) return c10::IValue(*b);
  if (const auto* s = std::get_if<std::string>(&v)) return c10::IValue(*s);
  return c10::IValue(std::get<std::vector<int64_t>>(v));
}

}  // namespace

OperatorSignature::OperatorSignature(const KernelSpec& spec, const std::string& schema,
                                     bool backward) {
  const auto where = fmt::format("kernel {}: {} schema", spec.name, backward ? "backward" : "forward");
  c10::FunctionSchema parsed = [&] {
    try {
      return torch::jit::parseSchema(schema);
    } catch (const std::exception& e) {
      throw UsageError(fmt::format("{} '{}' does not parse: {}", where, schema, e.what()));
    }
  }();
  name_ = parsed.name();
  const std::string expected = spec.name + (backward ? "_bwd" : "_fwd");
  if (name_ != expected)
    throw UsageError(fmt::format("{}: the operator is '{}', not '{}'", where, name_, expected));
  for (const auto& a : parsed.arguments()) {
    const std::string type = a.type()->str();
    Argument arg{Role::scalar, a.name(), type, type == "Tensor?"};
    if (is_tensor_type(type)) {
      if (const auto* in = by_schema_name(spec.inputs, a.name())) {
        arg.role = Role::input;
        arg.name = in->name;
      } else if (const auto* out = backward ? by_gradient_name(spec.outputs, a.name()) : nullptr) {
        arg.role = Role::cotangent;
        arg.name = grad_name(out->name);
      } else {
        throw UsageError(fmt::format("{}: argument '{}' is no input{}", where, a.name(),
                                     backward ? " and no output's cotangent" : ""));
      }
    } else if (const auto derived = spec.arguments.find(a.name()); derived != spec.arguments.end()) {
      arg.derived = &derived->second;
    } else {
      const ParamSpec* param = spec.schema ? spec.schema->find(a.name()) : nullptr;
      if (!param)
        throw UsageError(fmt::format(
            "{}: argument '{}' is no input, no parameter of the schema and no declared argument",
            where, a.name()));
      const bool fits = (type == "int" && param->type == ParamType::integer) ||
                        (type == "bool" && param->type == ParamType::flag) ||
                        (type == "str" && param->type == ParamType::choice) ||
                        (type == "int[]" && param->type == ParamType::integers);
      if (!fits)
        throw UsageError(fmt::format("{}: argument '{}' is {} but the parameter is {}", where,
                                     a.name(), type, to_string(param->type)));
    }
    names_.push_back(arg.name);
    arguments_.push_back(arg);
  }
  for (const auto& r : parsed.returns()) {
    const TensorSpec* t = backward ? by_gradient_name(spec.inputs, r.name())
                                   : by_schema_name(spec.outputs, r.name());
    if (!t)
      throw UsageError(fmt::format("{}: return '{}' is no {}", where, r.name(),
                                   backward ? "input's gradient" : "output"));
    returns_.push_back(backward ? grad_name(t->name) : t->name);
  }
}

torch::jit::Stack OperatorSignature::stack_for(const Problem& p,
                                               const NamedTensors& cotangents) const {
  torch::jit::Stack stack;
  stack.reserve(arguments_.size());
  for (const auto& a : arguments_) {
    if (a.role == Role::scalar) {
      stack.push_back(a.derived ? (*a.derived)(p) : parameter_value(p.c, a.name));
      continue;
    }
    const at::Tensor t = a.role == Role::input ? p.inputs.get(a.name) : cotangents.get(a.name);
    if (t.defined())
      stack.emplace_back(t);
    else if (a.optional)
      stack.emplace_back();
    else
      throw std::logic_error(fmt::format("{}: no tensor for argument '{}'", name_, a.name));
  }
  return stack;
}

NamedTensors OperatorSignature::results(const torch::jit::Stack& stack) const {
  NamedTensors out;
  for (size_t i = 0; i < returns_.size(); ++i)
    out.set(returns_[i], stack[i].isTensor() ? stack[i].toTensor() : at::Tensor());
  return out;
}

OpArgs OperatorSignature::pop_arguments(torch::jit::Stack& stack) const {
  return OpArgs(&names_, torch::jit::pop(stack, arguments_.size()));
}

void OperatorSignature::push_results(const NamedTensors& results, torch::jit::Stack& stack) const {
  for (const auto& name : returns_) stack.emplace_back(results.get(name));
}

const c10::IValue* OpArgs::find(const std::string& name) const {
  for (const auto& [n, v] : added_)
    if (n == name) return &v;
  if (names_)
    for (size_t i = 0; i < names_->size(); ++i)
      if ((*names_)[i] == name) return &values_[i];
  return nullptr;
}

at::Tensor OpArgs::operator[](const std::string& name) const {
  const c10::IValue* v = find(name);
  return v && v->isTensor() ? v->toTensor() : at::Tensor();
}

const c10::IValue& OpArgs::scalar(const std::string& name) const {
  const c10::IValue* v = find(name);
  if (!v) throw std::out_of_range(fmt::format("no operator argument '{}'", name));
  return *v;
}

void OpArgs::set(const std::string& name, c10::IValue value) {
  for (auto& [n, v] : added_)
    if (n == name) {
      v = std::move(value);
      return;
    }
  if (names_)
    for (size_t i = 0; i < names_->size(); ++i)
      if ((*names_)[i] == name) {
        values_[i] = std::move(value);
        return;
      }
  added_.emplace_back(name, std::move(value));
}

}  // namespace kprop
