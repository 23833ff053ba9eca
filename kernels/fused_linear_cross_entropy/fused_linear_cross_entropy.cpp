// fused_linear_cross_entropy: cross entropy of the logits h W^T (+ b) of hidden states
// h [rows, H] and an LM head W [V, H], without materializing all of them: Liger-Kernel's
// LigerFusedLinearCrossEntropyFunction (ops/fused_linear_cross_entropy.py), with the same
// options as cross_entropy. `chunks` emulates it: rows in chunks of
// next_pow2(cdiv(rows, cdiv(V, H))), each chunk's logits a matmul in h's dtype (+ b),
// Liger's row kernel over them (kernels/cross_entropy/liger_rows.h; the loss in fp32), then
// the gradient over the logits projected at once: dh = g W, dW += g^T h and db += sum g,
// rounded into W's and b's dtype chunk by chunk. grad_output scales the three afterwards
// (mean, sum) or, for reduction='none', each row of g before the projections (9ac26bb8).
// The planted variant is the code path Liger had before that fix (#1298).
#include <algorithm>
#include <vector>

#include "harness/model/host_values.h"
#include "harness/spec/kernel_spec.h"
#include "kernels/cross_entropy/liger_rows.h"

namespace kprop::fused_linear_cross_entropy {
namespace {
using namespace cross_entropy;
using T = at::Tensor;
using E = const Exact&;
constexpr int64_t kMax = int64_t{1} << 12;
enum Variant { correct, grad_output_first_element };

T acc(const T& t) { return in_accumulation_type(t); }
int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t next_pow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}
// Liger's chunk of rows: as many as keep the chunk's logits about as large as h.
int64_t chunk_rows(int64_t rows, int64_t V, int64_t H) { return next_pow2(cdiv(rows, cdiv(V, H))); }
int64_t chunks_of(const Case& c) {
  const int64_t rows = c.integer("rows");
  return cdiv(rows, chunk_rows(rows, c.integer("V"), c.integer("H")));
}
// torch.mm in the operands' dtype: an fp32 accumulation rounded once.
T product_in(const T& a, const T& b, at::ScalarType dtype) { return acc(a).matmul(acc(b)).to(dtype); }
// The loss buffer: fp32 (float64 for a float64 case, kprop's float64 emulation).
at::ScalarType loss_dtype(const T& h) { return h.scalar_type() == at::kDouble ? at::kDouble : at::kFloat; }

// Each chunk's logits, _input_chunk @ weight.t() (+ bias), in h's dtype.
T logits_of(const OpArgs& a) {
  const T h = a["h"], w = a["w"], b = a["b"];
  const int64_t rows = h.size(0), chunk = chunk_rows(rows, w.size(0), h.size(1));
  std::vector<T> parts;
  for (int64_t start = 0; start < rows; start += chunk) {
    T logits = product_in(h.narrow(0, start, std::min(chunk, rows - start)), w.t(), h.scalar_type());
    if (b.defined()) logits = (acc(logits) + acc(b)).to(h.scalar_type());
    parts.push_back(logits);
  }
  return at::cat(parts);
}

OpFunction forward() {
  return [](const OpArgs& a) {
    const Options o = options_of(a);
    const Rows r = liger_rows(logits_of(a), a["target"], o, loss_dtype(a["h"]),
                              TrueClass::once_in_fp32, false);
    return NamedTensors{{"loss", reduced(r.loss_1d, o)},
                        {"z_loss", o.return_z_loss ? reduced(r.z_loss_1d, o) : T()}};
  };
}

OpFunction backward(Variant v) {
  return [v](const OpArgs& a) {
    const Options o = options_of(a);
    const T h = a["h"], w = a["w"], b = a["b"], dloss = a["dloss"];
    const at::ScalarType dtype = h.scalar_type();
    const T grad = liger_rows(logits_of(a), a["target"], o, loss_dtype(h),
                              TrueClass::once_in_fp32, true).grad;
    // 9ac26bb8: reduction='none' recomputes the chunks in the backward and folds each row's
    // grad_output into g before the projections sum over rows.
    const bool per_row = dloss.dim() > 0 && v == correct;
    const T g = per_row ? (acc(grad) * acc(dloss).unsqueeze(1)).to(dtype) : grad;
    const int64_t rows = h.size(0), chunk = chunk_rows(rows, w.size(0), h.size(1));
    T dh = at::empty_like(h, at::MemoryFormat::Contiguous), dw = at::zeros_like(w, at::MemoryFormat::Contiguous);
    T db = b.defined() ? at::zeros_like(b, at::MemoryFormat::Contiguous) : T();
    for (int64_t start = 0; start < rows; start += chunk) {
      const int64_t n = std::min(chunk, rows - start);
      const T gc = g.narrow(0, start, n), hc = h.narrow(0, start, n);
      dh.narrow(0, start, n).copy_(product_in(gc, w, dtype));
      // grad_weight += torch.mm(grad_logits_chunk.t(), _input_chunk).float(), into W's dtype.
      dw = (acc(dw) + acc(product_in(gc.t(), hc, dtype))).to(w.scalar_type());
      if (b.defined()) db = (acc(db) + acc(acc(gc).sum(0).to(dtype))).to(b.scalar_type());
    }
    // torch.equal(grad_output, torch.tensor(1.0)) skips the multiply; else element_mul_kernel
    // scales each of the three by tl.load(grad_output_ptr): the scalar of 'mean' and 'sum',
    // and, before 9ac26bb8, a per-row grad_output's first element.
    const bool one = dloss.dim() == 0 && dloss.item<double>() == 1.0;
    if (!per_row && !one) {
      const T s = acc(dloss).reshape({-1}).select(0, 0);
      dh = (acc(dh) * s).to(dtype);
      dw = (acc(dw) * s).to(w.scalar_type());
      if (b.defined()) db = (acc(db) * s).to(b.scalar_type());
    }
    return NamedTensors{{"dh", dh}, {"dw", dw}, {"db", db}};
  };
}

// What the bounds read off the float64 inputs: the logits' magnitudes and cross_entropy's.
struct Sizes {
  Magnitudes ce;
  T logits_terms;  // [rows, V]: |h| |W|^T + |b| + |logits|: what the logits are rounded from
  T g;             // [rows, V]: |terms| of g per unit cotangent, with the logits' error moved in
};
Sizes sizes_of(E e) {
  const T h = e["h"], w = e["w"], b = e.or_zero("b");
  const T logits = h.matmul(w.t()) + b;
  Sizes s;
  s.ce = magnitudes(logits, e["target"], options_of(e.c));
  s.logits_terms = h.abs().matmul(w.abs().t()) + b.abs() + logits.abs();
  // d softmax_i / d logit_j = p_i (delta_ij - p_j): an error in the logits moves g_i by
  // p_i (|err_i| + sum_j p_j |err_j|), and the loss by sum_i |dloss/dlogit_i| |err_i|.
  const T moved = 1 + s.logits_terms + (s.ce.softmax * s.logits_terms).sum(1, true);
  s.g = s.ce.dlogits * moved;
  return s;
}
// |grad_output| per row, [rows, 1] or 0-d.
T per_row_cotangent(E e) {
  const T d = e["dloss"].abs();
  return d.dim() == 0 ? d : d.unsqueeze(1);
}

const bool registered = register_builtin_spec([] {
  KernelSpec k("fused_linear_cross_entropy");
  k.params = {extent("V", "classes (the vocabulary): rows of W", kMax, {"max_V", 32}).by_default(int64_t{16}),
              extent("H", "the hidden size: columns of h and W", kMax, {"max_H", 16}).by_default(int64_t{8}),
              extent("rows", "rows of h (tokens), in chunks of next_pow2(rows / (V / H))", kMax,
                     {"max_rows", 8})
                  .by_default(int64_t{4}),
              flag_param("bias", "a bias b [V] added to the logits").by_default(true)};
  for (ParamSpec& p : option_params()) k.params.push_back(std::move(p));
  k.operator_params = option_arguments();
  k.inputs = {{"h", {"rows", "H"}},
              {"w", {"V", "H"}},
              TensorSpec("target", {"rows"}).indices("V", [](const Case& c) {
                return SpecialIndex{c.integer("ignore_index"), ignored_percent(c)};
              }),
              TensorSpec("b", {"V"}).when_flag("bias").neutral(0.0)};
  k.outputs = {TensorSpec("loss", {"rows"}).scalar_when(reduces),
               TensorSpec("z_loss", {"rows"}).when_flag("return_z_loss").no_gradient().scalar_when(reduces)};
  k.reference = [](const OpArgs& a) {
    T logits = a["h"].matmul(a["w"].t());
    if (a["b"].defined()) logits = logits + a["b"];
    return reference_losses(logits, a["target"], options_of(a));
  };
  // The logits: H products summed in fp32, rounded to h's dtype, + b rounded again (two
  // partials in the output dtype, whose error moves the loss and g through the softmax).
  // The loss: cross_entropy's row (V + 16 terms), in fp32, summed over rows when reduced.
  // dh = g W (V terms), dW = g^T h and db = sum g over rows: g stored in h's dtype, times a
  // per-row grad_output ('none'), the chunk's product rounded, and added into W's (b's)
  // dtype once per chunk; 'mean' and 'sum' scale the three by grad_output at the end.
  const auto base = [](const Case& c) { return c.integer("V") + c.integer("H") + 16; };
  const auto over_rows = [base](const Case& c) { return base(c) + c.integer("rows"); };
  k.bounds = {
      {"loss", Bound::sum_of([=](const Case& c) { return reduces(c) ? over_rows(c) : base(c); },
                             [](E e) {
                               const Sizes s = sizes_of(e);
                               const T m = s.ce.loss_row + (s.ce.dlogits * s.logits_terms).sum(1);
                               return reduces(e.c) ? m.sum() : m;
                             },
                             2)},
      {"z_loss", Bound::sum_of([=](const Case& c) { return reduces(c) ? over_rows(c) : base(c); },
                               [](E e) {
                                 const Sizes s = sizes_of(e);
                                 // d lse / d logit_i = p_i
                                 const T m = s.ce.z_loss_row +
                                             s.ce.z_loss_slope * (s.ce.softmax * s.logits_terms).sum(1);
                                 return reduces(e.c) ? m.sum() : m;
                               })
                     .partials_when([](const Case& c) { return reduces(c) ? 3 : 2; })},
      {"dh", Bound::sum_of([=](const Case& c) { return base(c) + c.integer("V"); },
                           [](E e) { return (sizes_of(e).g * per_row_cotangent(e)).matmul(e["w"].abs()); },
                           4)
                 .scaled_after_rounding(1)},
      {"dw", Bound::sum_of(over_rows,
                           [](E e) {
                             return (sizes_of(e).g * per_row_cotangent(e)).t().matmul(e["h"].abs());
                           })
                 .partials_when([](const Case& c) { return 5 + static_cast<int>(chunks_of(c)); })
                 .scaled_after_rounding(1)},
      {"db", Bound::sum_of(over_rows, [](E e) { return (sizes_of(e).g * per_row_cotangent(e)).sum(0); })
                 .partials_when([](const Case& c) { return 5 + static_cast<int>(chunks_of(c)); })
                 .scaled_after_rounding(1)}};
  // Every result goes through a matmul (the logits, dh, dW) or a sum over rows (db): a BLAS
  // picks its order by the operands' strides, so `layout` holds them to the bound of two
  // calls. torch 2.11's CPU matmul sums an fp32 w transposed in another order than w.
  k.reordered_by_layout = {"loss", "z_loss", "dh", "dw", "db"};
  k.implementations = {
      {"chunks", "Liger's chunks: the logits' gradient projected at once, grad_output per row first",
       forward(), backward(correct)},
      {"chunks@grad_output_scalar",
       "planted: reduction='none' scales dh, dW and db by grad_output[0] (Liger before 9ac26bb8)",
       forward(), backward(grad_output_first_element)}};
  k.known_defects = {
      defect("per-row grad_output read as one value").in({"chunks@grad_output_scalar"})
          .hunted_by("vs_reference").shows("dh")
          .when([](const Case& c) {
            return c.integer("rows") == 2 && c.choice("reduction") == "none";
          })
          .because("with reduction='none' the gradients are projected in the forward and the "
                   "backward scales dh, dW and db by grad_output[0] (element_mul_kernel's scalar "
                   "load); dW and db sum over rows, so no later scaling can be right: Liger "
                   "#1298, fixed in 9ac26bb8")};
  return k;
}());
}  // namespace
}  // namespace kprop::fused_linear_cross_entropy
