// KernelInfo for geglu: what the generic properties need to know about it. An
// element-wise kernel owes exactness: it declares its policy implementation (`policy`
// compares every implementation with torch_policy bit for bit) and the cases that must
// give identical results (`invariance`: other core counts, buffer budgets, the other
// layout). It has no sequences: `chunked` and `packed` do not apply.
#include "harness/kernel_info.h"
#include "harness/random_tensor.h"
#include "kernels/common/host_values.h"
#include "kernels/geglu/error_bounds.h"
#include "kernels/geglu/grid.h"
#include "kernels/geglu/known_defects.h"
#include "kernels/geglu/ops.h"
#include "kernels/geglu/rounding_points.h"
#include "kernels/geglu/schema.h"
#include "kernels/geglu/shape.h"

namespace kprop::geglu {

namespace {

class GegluInfo final : public KernelInfo {
 public:
  std::string name() const override { return "geglu"; }
  std::vector<DType> dtypes() const override {
    return {DType::float64, DType::float32, DType::bfloat16, DType::float16};
  }
  std::vector<std::string> properties() const override {
    return {"gradient", "vs_reference", "policy", "invariance"};
  }

  std::vector<Implementation> implementations() const override {
    return {
        {"reference", "kprop_reference", "float64 loops over the contract's formula (oracle)"},
        {"torch_policy", "kprop_torch_policy", "the framework's rounding points, from ATen ops"},
        {"rows", "kprop_rows", "one program per row, column blocks from the buffer"},
        {"flat", "kprop_flat", "flatten-1D grid-stride loop, BLOCK from the buffer (Ascend)"},
        {"flat@gelu_in_dtype", "kprop_flat_gelu_in_dtype",
         "flat without the upcast: every step of gelu in the input dtype"},
        {"flat@fp32_product", "kprop_flat_fp32_product",
         "flat forming c from the unrounded fp32 gelu, rounded once"},
        {"flat@bwd_no_roundtrip", "kprop_flat_bwd_no_roundtrip",
         "flat taking db from the fp32 gelu, without the round trip"},
        {"flat@assumes_contiguous", "kprop_flat_assumes_contiguous",
         "flat indexing a and b as if their rows were adjacent"},
    };
  }
  std::string default_implementation() const override { return "flat"; }

  const Schema& schema() const override { return geglu::schema(); }

  std::vector<KnownDefect> known_defects() const override { return geglu::known_defects(); }

  std::optional<std::string> policy_implementation() const override {
    return std::string("torch_policy");
  }

  std::string rounding_point(const Problem& p, const NamedTensors& cot, const std::string& tensor,
                             const at::Tensor& actual, const at::Tensor& policy) const override {
    return geglu::rounding_point(p, cot, tensor, actual, policy);
  }

  // One core or 48, the real buffer or a small one (other blocks), the other layout.
  std::vector<EquivalentCase> equivalent_cases(const Case& c) const override {
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
  // once; in the fused layout, the two halves of one [..., 2·cols] tensor (same values).
  Problem materialize(const Case& c) const override {
    const Shape s = shape_of(c);
    auto draw = [&](uint64_t stream) {
      const auto exact = random_tensor(s.sizes(), c.distribution, c.seed, stream, DType::float64);
      const double scale = static_cast<double>(s.scale);
      return converted(elementwise_float64([scale](double v) { return v * scale; }, exact),
                       scalar_type(c.dtype));
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

  NamedTensors forward(const std::string& ns, const Problem& p) const override {
    const Shape s = shape_of(p.c);
    NamedTensors out;
    out.set("c", geglu_forward(ns, p.inputs.get("a"), p.inputs.get("b"), s.num_cores,
                               s.buffer_bytes));
    return out;
  }

  NamedTensors backward(const std::string& ns, const Problem& p,
                        const NamedTensors& cot) const override {
    const Shape s = shape_of(p.c);
    const auto [da, db] = geglu_backward(ns, cot.get("dc"), p.inputs.get("a"), p.inputs.get("b"),
                                         s.num_cores, s.buffer_bytes);
    NamedTensors out;
    out.set("da", da);
    out.set("db", db);
    return out;
  }

  std::vector<std::string> differentiable_inputs(const Problem&) const override {
    return {"a", "b"};
  }
  std::vector<std::string> outputs_with_cotangent(const Problem&) const override {
    return {"c"};
  }

  NamedTensors error_bounds(const Problem& p, const NamedTensors& cot, const NamedTensors& ref,
                            const std::vector<int>& joined_partials) const override {
    return geglu::error_bounds(p, cot, ref, joined_partials);
  }

  // Every element is computed alike, whatever its position: where the worst one lies is
  // in the error table, not in the symptom (a rounding defect would otherwise be named
  // after whichever element happened to be worst). The fused-layout defect is named by
  // what its minimal case needs: {layout=fused}.
  std::string region(const Problem&, const std::string&, int64_t) const override { return ""; }
};

const bool registered = register_kernel(std::make_unique<GegluInfo>());

}  // namespace
}  // namespace kprop::geglu
