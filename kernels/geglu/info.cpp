// geglu's spec (harness/spec/kernel_spec.h): what the generic properties need to know
// about it. An element-wise kernel owes exactness: it declares its policy implementation
// (`policy` compares every implementation with torch_policy bit for bit) and the cases
// that must give identical results (`invariance`: other core counts, buffer budgets, the
// other layout). It has no sequences: `chunked` and `packed` do not apply.
#include "harness/model/host_values.h"
#include "harness/model/random_tensor.h"
#include "harness/spec/kernel_spec.h"
#include "kernels/geglu/contract.h"
#include "kernels/geglu/error_bounds.h"
#include "kernels/geglu/grid.h"
#include "kernels/geglu/implementations.h"
#include "kernels/geglu/known_defects.h"
#include "kernels/geglu/rounding_points.h"
#include "kernels/geglu/schema.h"
#include "kernels/geglu/shape.h"

namespace kprop::geglu {

namespace {

// One core or 48, the real buffer or a small one (other blocks), the other layout.
std::vector<EquivalentCase> equivalent_cases(const Case& c) {
  const Shape s = shape_of(c);
  Case cores = c, buffer = c, layout = c;
  cores.set("num_cores", int64_t{s.num_cores == 1 ? 48 : 1});
  buffer.set("buffer_bytes",
             int64_t{s.buffer_bytes == kAscend910bBufferBytes ? 256 : kAscend910bBufferBytes});
  layout.set("layout", to_string(s.layout == Layout::fused ? Layout::contiguous : Layout::fused));
  std::vector<EquivalentCase> out{{"num_cores", cores}, {"buffer_bytes", buffer}};
  // The fused projection is twice as large: only while it stays within the size limit.
  if (schema().size_check(layout).empty()) out.push_back({"layout", layout});
  return out;
}

// a and b from their own streams of the case's seed, times scale, rounded to the dtype
// once (on `device`, with the host's bits); in the fused layout, the two halves of one
// [..., 2·cols] tensor (same values).
Problem materialize(const Case& c, const c10::Device& device) {
  const Shape s = shape_of(c);
  auto draw = [&](uint64_t stream) {
    return scaled_random_tensor(s.sizes(), c.distribution, static_cast<double>(s.scale), c.seed,
                                stream, c.dtype, device);
  };
  at::Tensor a = draw(0), b = draw(1);
  if (s.layout == Layout::fused) {
    const auto projection = at::cat({a, b}, -1);
    a = projection.narrow(-1, 0, s.cols);
    b = projection.narrow(-1, s.cols, s.cols);
  }
  Problem p{c, {}};
  p.inputs.set("a", a);
  p.inputs.set("b", b);
  return p;
}

Args args_of(const OpArgs& a) {
  return {a["a"], a["b"], a.integer("num_cores"), a.integer("buffer_bytes")};
}

using ForwardFn = at::Tensor (*)(const Args&);
using BackwardFn = Gradients (*)(const Args&, const at::Tensor&);

template <ForwardFn F>
NamedTensors forward(const OpArgs& a) {
  return {{"c", F(args_of(a))}};
}

template <BackwardFn F>
NamedTensors backward(const OpArgs& a) {
  const Gradients g = F(args_of(a), a["dc"]);
  return {{"da", g.da}, {"db", g.db}};
}

// The flatten-1D port and its variants: code paths of one kernel (flat.cpp, element.h).
template <Variant V>
at::Tensor flat_fwd(const Args& a) {
  return flat_forward(V, a);
}

template <Variant V>
Gradients flat_bwd(const Args& a, const at::Tensor& dc) {
  return flat_backward(V, a, dc);
}

// The contract's layouts (contract.h): rows may lie apart, each row is contiguous. A
// transposed or broadcast tensor is refused, as the kernel it emulates refuses it.
Takes contract_layouts() {
  Takes t;
  t.layouts = {"offset"};
  return t;
}

template <Variant V>
ImplementationSpec flat(const std::string& name, const std::string& about) {
  return {name, about, forward<flat_fwd<V>>, backward<flat_bwd<V>>, contract_layouts()};
}

KernelSpec spec() {
  KernelSpec k;
  k.name = "geglu";
  k.forward_schema = kForwardSchema;
  k.backward_schema = kBackwardSchema;
  k.schema = &geglu::schema();
  k.properties = {"gradient", "vs_reference", "policy", "invariance", "layout", "determinism",
                  "guard", "composition"};
  k.inputs = {TensorSpec("a"), TensorSpec("b")};
  k.outputs = {TensorSpec("c")};
  k.reference = forward<reference_forward>;
  k.reference_backward = backward<reference_backward>;
  k.reference_about = "float64 loops over the contract's formula (oracle; ATen on a device)";
  k.oracle_runs_on_any_device = true;  // reference and bounds as ATen ops there (formula.h)
  k.implementations = {
      {"torch_policy", "the framework's rounding points, from ATen ops", forward<policy_forward>,
       backward<policy_backward>, contract_layouts()},
      {"rows", "one program per row, column blocks from the buffer", forward<rows_forward>,
       backward<rows_backward>, contract_layouts()},
      flat<Variant::correct>("flat", "flatten-1D grid-stride loop, BLOCK from the buffer (Ascend)"),
      flat<Variant::gelu_in_dtype>("flat@gelu_in_dtype",
                                   "flat without the upcast: every step of gelu in the input dtype"),
      flat<Variant::fp32_product>("flat@fp32_product",
                                  "flat forming c from the unrounded fp32 gelu, rounded once"),
      flat<Variant::bwd_no_roundtrip>("flat@bwd_no_roundtrip",
                                      "flat taking db from the fp32 gelu, without the round trip"),
      flat<Variant::assumes_contiguous>("flat@assumes_contiguous",
                                        "flat indexing a and b as if their rows were adjacent"),
  };
  k.default_implementation = "flat";
  k.known_defects = geglu::known_defects();
  k.materialize = materialize;
  k.error_bounds = geglu::error_bounds;
  // Every element is computed alike, whatever its position: where the worst one lies is
  // in the error table, not in the symptom (a rounding defect would otherwise be named
  // after whichever element happened to be worst), so it declares no regions. The
  // fused-layout defect is named by what its minimal case needs: {layout=fused}.
  k.policy_implementation = "torch_policy";
  k.rounding_point = geglu::rounding_point;
  k.equivalent_cases = equivalent_cases;
  return k;
}

const bool registered = [] {
  const bool ok = register_builtin_spec(spec());
  // The float64 reference checks the contract too: it takes the same layouts.
  declare_takes("geglu", "reference", contract_layouts());
  return ok;
}();

}  // namespace
}  // namespace kprop::geglu
