// A KernelSpec compiled into a Kernel, and its operators registered: everything
// harness/spec/kernel_spec.h says is derived is derived here, and the Kernel's facts are
// resolved once (kernel_of).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/library.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>

#include "core/errors.h"
#include "harness/execution/dispatch.h"
#include "harness/model/host_values.h"
#include "harness/model/random_tensor.h"
#include "harness/model/tensor_layouts.h"
#include "harness/spec/autograd_backward.h"
#include "harness/spec/derived_bounds.h"
#include "harness/spec/kernel_spec.h"
#include "harness/spec/operator_signature.h"

namespace kprop {

Dim param_dim(const std::string& name) {
  return {name, [name](const Case& c) { return c.integer(name); }};
}

RegionRule RegionRule::blocks(std::string dim, int64_t width, std::string element) {
  const std::string size = dim, whole = fmt::format("{}-wide blocks", width);
  return {std::move(dim), [=](const Case& c, int64_t index) -> std::string {
            const int64_t n = c.integer(size);
            if (index < n - n % width) return whole;
            return index == n - 1 ? "last " + element : "remainder";
          }};
}

TensorSpec& TensorSpec::when_flag(const std::string& flag) {
  present = [flag](const Case& c) { return c.flag(flag); };
  this->flag = flag;
  return *this;
}

std::string implementation_namespace(const std::string& implementation) {
  std::string ns = "kprop_" + implementation;
  for (char& ch : ns)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return ns;
}

namespace {

constexpr const char* kReference = "reference";

bool is_present(const TensorSpec& t, const Case& c) { return !t.present || t.present(c); }

// A spec'd implementation's side as a boxed operator: its arguments read off the stack by
// name, its results pushed in the schema's order.
class SpecOperator final : public c10::OperatorKernel {
 public:
  SpecOperator(const OperatorSignature& signature, OpFunction f, bool in_float64)
      : signature_(signature), f_(std::move(f)), in_float64_(in_float64) {}
  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
    if (in_float64_) as_contiguous_float64(op, *stack);
    const OpArgs args = signature_.pop_arguments(*stack);
    signature_.push_results(f_(args), *stack);
  }

 private:
  // The reference called as an implementation under test, in a dtype below float64 or on
  // a strided view: it computes in float64 on contiguous copies and answers in float64,
  // the exact answer (as causal_conv1d's and geglu's references always did), within every
  // derived bound and the same whatever the layout. Its formula run in bf16 or fp32 would
  // round each ATen step, in an order no kernel has, and fail the bounds derived for real
  // kernels; on a strided view ATen sums in another order (the first nightly run over the
  // whole library: 46 failures of `reference` in 6 kernels). The oracle's own calls are
  // float64 and contiguous already: nothing changes for them.
  static void as_contiguous_float64(const c10::OperatorHandle& op, torch::jit::Stack& stack) {
    const auto arguments = static_cast<std::ptrdiff_t>(op.schema().arguments().size());
    for (auto arg = stack.end() - arguments; arg != stack.end(); ++arg) {
      if (!arg->isTensor()) continue;
      const at::Tensor t = arg->toTensor();
      if (t.defined() && t.is_floating_point()) *arg = t.to(at::kDouble).contiguous();
    }
  }

  const OperatorSignature& signature_;
  OpFunction f_;
  bool in_float64_;  // the reference: every floating input as contiguous float64
};

// A declaration with what is derived from it: the operator signatures and the gradients.
// The Kernel's operations are its member functions (kernel_of).
class CompiledSpec {
 public:
  explicit CompiledSpec(KernelSpec spec)
      : spec_(std::move(spec)),
        forward_(spec_, spec_.forward_schema, false),
        backward_(spec_, spec_.backward_schema, true) {
    for (const auto& in : spec_.inputs)
      if (in.differentiable) gradients_.emplace_back(&in, grad_name(in.name));
  }

  const KernelSpec& spec() const { return spec_; }
  const OperatorSignature& forward_signature() const { return forward_; }
  const OperatorSignature& backward_signature() const { return backward_; }

  KernelFacts facts() const {
    KernelFacts f;
    f.name = spec_.name;
    f.operator_schemas = {spec_.forward_schema, spec_.backward_schema};
    f.dtypes = spec_.dtypes;
    f.properties = spec_.properties;
    f.implementations.push_back(
        {kReference, implementation_namespace(kReference), spec_.reference_about});
    for (const auto& i : spec_.implementations)
      f.implementations.push_back({i.name, implementation_namespace(i.name), i.about});
    f.default_implementation = spec_.default_implementation;
    f.schema = spec_.schema;
    for (const auto& in : spec_.inputs) f.handed_tensor_names.push_back(in.name);
    for (const auto& out : spec_.outputs)
      if (out.differentiable) f.handed_tensor_names.push_back(grad_name(out.name));
    for (const auto* list : {&spec_.inputs, &spec_.outputs})
      for (const auto& t : *list)
        for (const auto& [name, order] : t.storage_orders)
          f.storage_orders.push_back({t.name, name, order});
    f.reordered_by_layout = spec_.reordered_by_layout;
    for (const auto& in : spec_.inputs)
      if (in.index_draw) f.index_inputs.push_back(in.name);
    f.nondeterministic = spec_.nondeterministic;
    f.oracle_runs_on_any_device = spec_.oracle_runs_on_any_device;
    for (const auto& in : spec_.inputs)
      if (in.neutral_value) f.neutral_inputs.push_back({in.name, in.flag, *in.neutral_value});
    f.sequences = spec_.sequences;
    f.known_defects = spec_.known_defects;
    f.policy_implementation = spec_.policy_implementation;
    return f;
  }

  // Drawn where they are wanted. A kernel whose inputs are related afterwards (host code)
  // draws on the CPU and copies; a materialize of its own draws what it can there.
  Problem materialize(const Case& c, const c10::Device& device) const {
    if (!device.is_cpu() && spec_.relate_inputs) {
      const Problem p = materialize(c, c10::kCPU);
      return Problem{p.c, same_layouts_on(p.inputs, device)};
    }
    if (!spec_.materialize) return drawn_problem(c, device);
    Problem p = spec_.materialize(c, device);
    if (!device.is_cpu()) return Problem{p.c, same_layouts_on(p.inputs, device)};
    if (spec_.relate_inputs) spec_.relate_inputs(c, p.inputs);
    return p;
  }

  NamedTensors forward(const std::string& ns, const Problem& p) const {
    auto stack = forward_.stack_for(p, {});
    call_boxed(ns + "::" + forward_.operator_name(), stack, forward_.returns().size());
    // The outputs this problem has: an output the case leaves out (zt without normalize)
    // may come back as an empty tensor, which no property is to hand on or compare.
    NamedTensors out = forward_.results(stack);
    for (const auto& o : spec_.outputs)
      if (!is_present(o, p.c)) out.set(o.name, at::Tensor());
    return out;
  }

  NamedTensors backward(const std::string& ns, const Problem& p,
                        const NamedTensors& cotangents) const {
    auto stack = backward_.stack_for(p, cotangents);
    call_boxed(ns + "::" + backward_.operator_name(), stack, backward_.returns().size());
    const NamedTensors all = backward_.results(stack);
    NamedTensors out;  // the gradients of the inputs this problem differentiates
    for (const auto& [in, grad] : gradients_)
      if (is_present(*in, p.c)) out.set(grad, all.get(grad));
    return out;
  }

  std::vector<std::string> differentiable_inputs(const Problem& p) const {
    std::vector<std::string> names;
    for (const auto& in : spec_.inputs)
      if (in.differentiable && is_present(in, p.c)) names.push_back(in.name);
    return names;
  }
  std::vector<std::string> outputs_with_cotangent(const Problem& p) const {
    std::vector<std::string> names;
    for (const auto& out : spec_.outputs)
      if (out.differentiable && is_present(out, p.c) && (!out.cotangent || out.cotangent(p.c)))
        names.push_back(out.name);
    return names;
  }

  NamedTensors error_bounds(const Problem& p, const NamedTensors& cotangents,
                            const NamedTensors& reference,
                            const std::vector<int>& joined_partials) const {
    if (spec_.error_bounds) return spec_.error_bounds(p, cotangents, reference, joined_partials);
    Exact exact{p.c, Kernel::in_dtype(p, DType::float64).inputs};
    for (const auto& [name, t] : cotangents) exact.tensors.set(name, float64_of(t));
    for (const auto& [name, t] : reference) exact.tensors.set(name, t);
    std::map<std::string, int64_t> dims;
    for (const auto& d : spec_.dims) dims[d.name] = d.size(p.c);
    return derived_bounds(spec_.bounds, exact, dims, reference, joined_partials);
  }

  std::string region(const Problem& p, const std::string& tensor, int64_t flat) const {
    if (spec_.region) return spec_.region(p, tensor, flat);
    const TensorSpec* t = tensor_named(tensor);
    if (!t) return "";
    const auto shape = sizes(*t, p.c);
    if (shape.size() != t->dims.size()) return "";  // a 0-d output has no region
    for (const auto& rule : spec_.regions) {
      int64_t inner = 1;
      for (size_t k = t->dims.size(); k-- > 0;) {
        if (t->dims[k] == rule.dim) return rule.name(p.c, (flat / inner) % shape[k]);
        inner *= shape[k];
      }
    }
    return "";
  }

 private:
  // An input or output, or the input or output a gradient or cotangent belongs to.
  const TensorSpec* tensor_named(const std::string& name) const {
    for (const auto* list : {&spec_.inputs, &spec_.outputs})
      for (const auto& t : *list)
        if (t.name == name || grad_name(t.name) == name) return &t;
    return nullptr;
  }
  // Each input drawn from its own stream of the seed, on `device`.
  Problem drawn_problem(const Case& c, const c10::Device& device) const {
    Problem p{c, {}};
    for (size_t i = 0; i < spec_.inputs.size(); ++i) {
      const auto& in = spec_.inputs[i];
      // An absent computed input is no entry at all, so that a case from before it was
      // declared keeps its inputs' fingerprint (which names the absent ones).
      if (in.compute && !is_present(in, c)) continue;
      p.inputs.set(in.name, is_present(in, c) ? drawn(in, c, i, device) : at::Tensor());
    }
    if (spec_.relate_inputs) spec_.relate_inputs(c, p.inputs);
    return p;
  }
  // Input `i`'s tensor in case c, from its own stream of the seed.
  at::Tensor drawn(const TensorSpec& in, const Case& c, size_t i, const c10::Device& device) const {
    if (in.compute) {
      const auto t = in.compute(c);
      return device.is_cpu() ? t : same_layout_on(t, device);
    }
    if (!in.index_draw)
      return random_tensor(sizes(in, c), c.distribution, c.seed, i, c.dtype, device);
    const IndexDraw& rule = *in.index_draw;
    const SpecialIndex special = rule.special ? rule.special(c) : SpecialIndex{};
    return random_indices(sizes(in, c), dim_size(rule.below, c), special.value, special.percent,
                          c.seed, i, device);
  }
  int64_t dim_size(const std::string& name, const Case& c) const {
    for (const auto& d : spec_.dims)
      if (d.name == name) return d.size(c);
    throw std::logic_error("no dimension " + name);  // check_spec makes it one
  }
  std::vector<int64_t> sizes(const TensorSpec& t, const Case& c) const {
    std::vector<int64_t> out;
    if (t.scalar && t.scalar(c)) return out;
    for (const auto& name : t.dims)
      for (const auto& d : spec_.dims)
        if (d.name == name) out.push_back(d.size(c));
    return out;
  }

  KernelSpec spec_;
  OperatorSignature forward_, backward_;
  // Each differentiable input with its gradient's name, named once.
  std::vector<std::pair<const TensorSpec*, std::string>> gradients_;
};

// The Kernel of a compiled declaration: its facts resolved now, its operations the
// declaration's own functions where it gives them, else the derived ones.
std::unique_ptr<Kernel> kernel_of(std::shared_ptr<const CompiledSpec> compiled) {
  const KernelSpec& s = compiled->spec();
  const CompiledSpec* k = compiled.get();
  KernelOperations ops;
  ops.materialize = [compiled](const Case& c, const c10::Device& d) { return compiled->materialize(c, d); };
  ops.forward = [k](const std::string& ns, const Problem& p) { return k->forward(ns, p); };
  ops.backward = [k](const std::string& ns, const Problem& p, const NamedTensors& cot) {
    return k->backward(ns, p, cot);
  };
  ops.differentiable_inputs = [k](const Problem& p) { return k->differentiable_inputs(p); };
  ops.outputs_with_cotangent = [k](const Problem& p) { return k->outputs_with_cotangent(p); };
  ops.error_bounds = [k](const Problem& p, const NamedTensors& cot, const NamedTensors& ref,
                         const std::vector<int>& joined) {
    return k->error_bounds(p, cot, ref, joined);
  };
  ops.region = [k](const Problem& p, const std::string& t, int64_t flat) { return k->region(p, t, flat); };
  ops.retiled = s.retiled;
  ops.rounding_point = s.rounding_point;
  ops.equivalent_cases = s.equivalent_cases;
  ops.refusal = s.refusal;
  KernelFacts facts = compiled->facts();
  // The declaration lives as long as the compiled spec that holds it.
  std::shared_ptr<const KernelSpec> declaration(compiled, &s);
  return std::make_unique<Kernel>(std::move(facts), std::move(ops), std::move(declaration));
}



// The operator schemas of a spec that declares none (kernel_spec.h says how).
void derive_schemas(KernelSpec& s) {
  auto type_of = [&](const std::string& param) -> std::string {
    const ParamSpec* p = s.schema ? s.schema->find(param) : nullptr;
    if (!p) throw UsageError(fmt::format("kernel {}: operator_params: '{}' is no parameter", s.name, param));
    switch (p->type) {
      case ParamType::integer: return "int";
      case ParamType::flag: return "bool";
      case ParamType::choice: return "str";
      case ParamType::integers: return "int[]";
    }
    return "";
  };
  std::vector<std::string> inputs, params, cotangents, outputs, grads;
  for (const auto& in : s.inputs) {
    inputs.push_back(fmt::format("Tensor{} {}", in.present ? "?" : "", in.name));
    if (in.differentiable) grads.push_back("Tensor " + grad_name(in.name));
  }
  for (const auto& out : s.outputs) {
    outputs.push_back("Tensor " + out.name);
    if (out.differentiable)
      cotangents.push_back(fmt::format("Tensor{} {}", out.present || out.cotangent ? "?" : "",
                                       grad_name(out.name)));
  }
  for (const auto& p : s.operator_params) params.push_back(type_of(p) + " " + p);
  auto joined = [](std::vector<std::string> parts) { return fmt::format("{}", fmt::join(parts, ", ")); };
  auto concat = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  s.forward_schema = fmt::format("{}_fwd({}) -> ({})", s.name, joined(concat(inputs, params)),
                                 joined(outputs));
  s.backward_schema =
      fmt::format("{}_bwd({}) -> ({})", s.name,
                  joined(concat(concat(inputs, cotangents), params)), joined(grads));
}

// A dimension that a tensor names (or indexes below) and nobody declares: the integer
// parameter of its name.
void derive_dims(KernelSpec& s) {
  auto derive = [&](const std::string& name) {
    const bool declared = std::any_of(s.dims.begin(), s.dims.end(),
                                      [&](const Dim& d) { return d.name == name; });
    const ParamSpec* p = s.schema ? s.schema->find(name) : nullptr;
    if (!declared && p && p->type == ParamType::integer) s.dims.push_back(param_dim(name));
  };
  for (const auto* list : {&s.inputs, &s.outputs})
    for (const auto& t : *list) {
      for (const auto& name : t.dims) derive(name);
      if (t.index_draw) derive(t.index_draw->below);
    }
}

// A known defect's shape given as parameter values ("rows=1 cols=7 bias=false"): each a
// parameter of the schema with a value of its type, compiled into the predicate.
void compile_defect_shapes(KernelSpec& s) {
  for (auto& d : s.known_defects) {
    if (d.shape_values.empty()) continue;
    std::vector<std::pair<std::string, ParamValue>> values;
    std::istringstream words(d.shape_values);
    for (std::string word; words >> word;) {
      const auto eq = word.find('=');
      const ParamSpec* p = eq == std::string::npos ? nullptr : s.schema->find(word.substr(0, eq));
      if (!p)
        throw UsageError(fmt::format("kernel {}: known defect '{}': when: '{}' is not NAME=VALUE "
                                     "of a parameter", s.name, d.name, word));
      try {
        values.emplace_back(p->name, parse_param(*p, word.substr(eq + 1)));
      } catch (const std::exception& e) {
        throw UsageError(fmt::format("kernel {}: known defect '{}': when: {}", s.name, d.name, e.what()));
      }
    }
    d.shape = [values](const Case& c) {
      for (const auto& [name, v] : values)
        if (c.params.at(name) != v) return false;
      return true;
    };
  }
}

// What a declaration must hold before anything is derived from it; names the field.
void check_spec(const KernelSpec& s) {
  auto fail = [&](const std::string& what) {
    throw UsageError(fmt::format("kernel {}: {}", s.name.empty() ? "(unnamed)" : s.name, what));
  };
  if (s.name.empty()) fail("name is empty");
  if (!s.schema) fail("schema (or params) is missing");
  if (!s.reference) fail("reference is missing");
  std::set<std::string> dims, tensors;
  for (const auto& d : s.dims)
    if (!dims.insert(d.name).second) fail(fmt::format("dims: '{}' is declared twice", d.name));
  for (const auto* list : {&s.inputs, &s.outputs})
    for (const auto& t : *list) {
      if (!tensors.insert(t.name).second)
        fail(fmt::format("tensor '{}' is declared twice", t.name));
      for (const auto& d : t.dims)
        if (!dims.count(d)) fail(fmt::format("tensor '{}': dimension '{}' is not declared", t.name, d));
      if (t.index_draw) {
        if (!dims.count(t.index_draw->below))
          fail(fmt::format("tensor '{}': indices below '{}', which is not a declared dimension",
                           t.name, t.index_draw->below));
        if (t.differentiable) fail(fmt::format("tensor '{}': indices have no gradient", t.name));
        if (t.neutral_value) fail(fmt::format("tensor '{}': indices have no neutral value", t.name));
      }
      if (t.neutral_value && t.flag.empty())
        fail(fmt::format("tensor '{}': a neutral value needs an input a flag leaves out "
                         "(when_flag)", t.name));
      for (const auto& [layout, order] : t.storage_orders) {
        std::vector<int64_t> sorted = order;
        std::sort(sorted.begin(), sorted.end());
        const size_t rank = t.dims.empty() ? order.size() : t.dims.size();  // dims: where declared
        bool permutation = !order.empty() && sorted.size() == rank;
        for (size_t i = 0; permutation && i < sorted.size(); ++i) permutation = sorted[i] == static_cast<int64_t>(i);
        if (!permutation)
          fail(fmt::format("tensor '{}': storage order '{}' is no order of its {} dimensions",
                           t.name, layout, rank));
      }
    }
  for (const auto& in : s.inputs)
    if (in.scalar) fail(fmt::format("tensor '{}': an input is never scalar_when", in.name));
  for (const auto& out : s.outputs) {
    if (out.index_draw) fail(fmt::format("tensor '{}': an output has no index draw", out.name));
    if (out.compute) fail(fmt::format("tensor '{}': an output is never computed from the case", out.name));
  }
  for (const auto& in : s.inputs)
    if (in.compute && (in.index_draw || in.neutral_value))
      fail(fmt::format("tensor '{}': a computed input is neither drawn nor left out as neutral",
                       in.name));
  std::set<std::string> results;
  for (const auto& out : s.outputs) results.insert(out.name);
  for (const auto& in : s.inputs)
    if (in.differentiable) results.insert(grad_name(in.name));
  for (const auto& r : s.reordered_by_layout)
    if (!results.count(r)) fail(fmt::format("reordered_by_layout: '{}' is no output or gradient", r));
  if (!s.error_bounds) {
    for (const auto& r : results)
      if (!s.bounds.count(r)) fail(fmt::format("bounds: '{}' has no bound", r));
    for (const auto& [name, b] : s.bounds) {
      if (!results.count(name)) fail(fmt::format("bounds: '{}' is no output or gradient", name));
      if (b.kind == Bound::Kind::sum && !b.terms && !dims.count(b.over))
        fail(fmt::format("bounds: '{}' sums over '{}', which is not a declared dimension", name, b.over));
    }
  }
  for (const auto& r : s.regions)
    if (!dims.count(r.dim)) fail(fmt::format("regions: dimension '{}' is not declared", r.dim));
  std::set<std::string> impls{kReference};
  for (const auto& i : s.implementations) {
    if (!impls.insert(i.name).second)
      fail(fmt::format("implementation '{}' is declared twice", i.name));
    if (!i.forward) fail(fmt::format("implementation '{}': its forward is missing", i.name));
    if (i.backward && i.differentiated)
      fail(fmt::format("implementation '{}': a backward and backward_by_autograd_of both given",
                       i.name));
  }
  if (!impls.count(s.default_implementation))
    fail(fmt::format("default_implementation '{}' is not declared", s.default_implementation));
  for (const auto& d : s.known_defects)
    for (const auto& i : d.impls)
      if (!impls.count(i))
        fail(fmt::format("known defect '{}': implementation '{}' is not declared", d.name, i));
}

// The operators of one implementation, registered under its namespace. The libraries live
// as long as the process, as TORCH_LIBRARY_FRAGMENT's do.
void register_operators(const CompiledSpec& k, const std::string& impl, OpFunction fwd,
                        OpFunction bwd) {
  static std::vector<std::unique_ptr<torch::Library>> libraries;
  auto lib = std::make_unique<torch::Library>(torch::Library::FRAGMENT,
                                              implementation_namespace(impl), c10::nullopt,
                                              __FILE__, __LINE__);
  lib->def(k.spec().forward_schema.c_str());
  lib->def(k.spec().backward_schema.c_str());
  lib->impl(k.forward_signature().operator_name().c_str(),
            torch::CppFunction::makeFromBoxedFunctor(
                std::make_unique<SpecOperator>(k.forward_signature(), std::move(fwd),
                                               impl == kReference)));
  lib->impl(k.backward_signature().operator_name().c_str(),
            torch::CppFunction::makeFromBoxedFunctor(
                std::make_unique<SpecOperator>(k.backward_signature(), std::move(bwd),
                                               impl == kReference)));
  libraries.push_back(std::move(lib));
}

// The declaration completed with what it leaves to be derived, and checked.
std::shared_ptr<const CompiledSpec> compiled(KernelSpec spec) {
  if (!spec.schema && !spec.params.empty()) {
    auto schema = std::make_shared<Schema>();
    schema->kernel = spec.name;
    schema->params = spec.params;
    schema->limits = spec.limits;
    for (const auto& p : spec.params)
      if (p.limit) schema->limits.push_back(*p.limit);
    spec.owned_schema = schema;
    spec.schema = schema.get();
  }
  derive_dims(spec);
  if (spec.default_implementation.empty())
    spec.default_implementation =
        spec.implementations.empty() ? kReference : spec.implementations.front().name;
  if (spec.forward_schema.empty() && spec.backward_schema.empty()) derive_schemas(spec);
  check_spec(spec);
  compile_defect_shapes(spec);
  return std::make_shared<const CompiledSpec>(std::move(spec));
}

}  // namespace

std::unique_ptr<Kernel> compile_spec(KernelSpec spec) { return kernel_of(compiled(std::move(spec))); }

bool register_spec(KernelSpec spec) {
  for (const auto& name : kernel_names())
    if (name == spec.name) return false;  // a library loaded twice
  const auto compiled_spec = compiled(std::move(spec));
  const CompiledSpec& k = *compiled_spec;
  const KernelSpec& s = k.spec();
  // A side without a backward gets autograd's of its forward: for an implementation, what
  // a user who calls its forward inside autograd gets.
  const auto backward_of = [&s](const OpFunction& forward, const OpFunction& backward) {
    if (backward) return backward;
    return OpFunction([&s, &forward](const OpArgs& args) { return autograd_backward(s, forward, args); });
  };
  register_operators(k, kReference, s.reference, backward_of(s.reference, s.reference_backward));
  for (const auto& i : s.implementations)
    register_operators(k, i.name, i.forward,
                       backward_of(i.differentiated ? i.differentiated : i.forward, i.backward));
  const std::string name = s.name;
  std::vector<std::pair<std::string, Takes>> takes;
  for (const auto& i : s.implementations)
    if (i.takes) takes.emplace_back(i.name, *i.takes);
  const bool registered = register_kernel(kernel_of(compiled_spec));
  for (auto& [impl, t] : takes) declare_takes(name, impl, std::move(t));
  return registered;
}

bool register_builtin_spec(KernelSpec spec) {
  try {
    return register_spec(std::move(spec));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kprop: %s\n", e.what());
    std::exit(2);
  }
}

}  // namespace kprop
