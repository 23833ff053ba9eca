// cross_entropy: the loss of logits x [rows, V] against class indices target [rows], as
// Liger-Kernel's LigerCrossEntropyFunction (ops/cross_entropy.py) computes it for LLM
// training: ignore_index, label smoothing, a tanh softcap, PaLM's z-loss (lse_square_scale,
// optionally returned), reduction 'mean' (over the rows not ignored), 'sum' or 'none'.
// `rows` emulates Liger's row kernel (kernels/cross_entropy/liger_rows.h) and its backward's
// handling of grad_output. The planted variants are code paths Liger has had, never an
// injected number.
#include <cmath>

#include "harness/model/host_values.h"
#include "harness/spec/kernel_spec.h"
#include "kernels/cross_entropy/liger_rows.h"

namespace kprop::cross_entropy {
namespace {
using T = at::Tensor;
using E = const Exact&;
constexpr int64_t kMaxV = int64_t{1} << 17, kMaxRows = int64_t{1} << 14;
// Past 2^14 classes a case keeps at most two rows: what changes there is the blocks.
constexpr int64_t kScaleV = int64_t{1} << 14, kScaleRows = 2, kAtScalePercent = 3;
enum Variant { correct, grad_output_first_element, true_class_read_modify_write, softcap_padding };

T acc(const T& t) { return in_accumulation_type(t); }

OpFunction forward(TrueClass true_class, Padding padding = Padding::masked) {
  return [true_class, padding](const OpArgs& a) {
    const Options o = options_of(a);
    const Rows r =
        liger_rows(a["x"], a["target"], o, a["x"].scalar_type(), true_class, false, padding);
    return NamedTensors{{"loss", reduced(r.loss_1d, o)},
                        {"z_loss", o.return_z_loss ? reduced(r.z_loss_1d, o) : T()}};
  };
}

// LigerCrossEntropyFunction.backward: the gradient the forward wrote over the logits, times
// grad_output (cross_entropy_backward).
OpFunction backward(Variant v) {
  return [v](const OpArgs& a) {
    const Options o = options_of(a);
    const T x = a["x"], dloss = a["dloss"];
    const TrueClass true_class =
        v == true_class_read_modify_write ? TrueClass::read_modify_write : TrueClass::once_in_fp32;
    const Padding padding = v == softcap_padding ? Padding::softcapped : Padding::masked;
    const T grad = liger_rows(x, a["target"], o, x.scalar_type(), true_class, true, padding).grad;
    // torch.equal(grad_output, torch.tensor(1.0)): the last layer's 1, no multiply.
    if (dloss.dim() == 0 && dloss.item<double>() == 1.0) return NamedTensors{{"dx", grad}};
    // reduction='none' (grad_output.ndim > 0, #680): each row times its own grad_output.
    if (dloss.dim() > 0 && v != grad_output_first_element)
      return NamedTensors{{"dx", (acc(grad) * acc(dloss).unsqueeze(1)).to(x.scalar_type())}};
    // element_mul_kernel: tl.load(grad_output_ptr), one value for every row. Before #680 a
    // per-row grad_output took this path too, and every row was scaled by its first element.
    const T first = acc(dloss).reshape({-1}).select(0, 0);
    return NamedTensors{{"dx", (acc(grad) * first).to(x.scalar_type())}};
  };
}

// The target's logit raised above the row's largest: softmax -> 1 there, where the
// gradient p - 1 cancels. In the case's dtype, before anything sees the logits.
void peak_at_target(const Case& c, NamedTensors& in) {
  const std::string& logits = c.choice("logits");
  if (logits == "drawn") return;
  const T x = in.get("x"), target = in.get("target");
  const int64_t V = x.size(1);
  const T in_range = target.ge(0).logical_and(target.lt(V));
  const T y = at::where(in_range, target, at::zeros_like(target)).unsqueeze(1);
  // peaked: max + ln V + 4 (softmax >= 0.98 at the target); saturated: max + 40 (1 in fp32).
  const double gap = logits == "peaked" ? std::log(static_cast<double>(V)) + 4 : 40;
  const T x64 = x.to(at::kDouble);
  const T raised = x64.scatter(1, y, (x64.amax(1) + gap).unsqueeze(1));
  in.set("x", at::where(in_range.unsqueeze(1), raised, x64).to(x.scalar_type()));
}

Magnitudes magnitudes_of(E e) { return magnitudes(e["x"], e["target"], options_of(e.c)); }

const bool registered = register_builtin_spec([] {
  KernelSpec k("cross_entropy");
  k.params = {
      [] {
        ParamSpec p = extent("V", "classes (the vocabulary): one row of logits", kMaxV, {"max_V", 64});
        // One block holds next_pow2(V) classes (its tail masked); past 2^15, blocks of 2^15
        // with an online softmax across them: those edges in V_at_scale percent of draws.
        p.by_default(int64_t{16}).drawn([](const DrawContext& ctx) {
          const auto at_scale = static_cast<uint32_t>(ctx.limit("V_at_scale"));
          return std::vector<IntOption>{
              IntOption::just(10, 1), IntOption::just(10, 2),
              IntOption::any_of(30, around({64, 128, 256, 1024})),
              IntOption::up_to(50 - at_scale, 1, "max_V"),
              IntOption::any_of(at_scale, around({kScaleV, kMaxFused, 2 * kMaxFused}))};
        });
        return p;
      }(),
      [] {
        ParamSpec p = extent("rows", "rows of logits (tokens)", kMaxRows, {"max_rows", 8});
        p.by_default(int64_t{4});
        p.depends_on = {"V"};
        p.bounds = [](const Case& c, size_t) {
          return Bounds{1, c.integer("V") > kScaleV ? kScaleRows : kMaxRows,
                        "past 2^14 classes, rows <= 2"};
        };
        return p;
      }()};
  for (ParamSpec& p : option_params()) k.params.push_back(std::move(p));
  k.params.push_back(
      choice_param("logits",
                   "drawn; peaked: the target's logit the row's largest + ln V + 4 (softmax "
                   ">= 0.98 there, where p - 1 cancels); saturated: + 40 (softmax 1 in fp32)",
                   {"drawn", "peaked", "saturated"}, {60, 25, 15}));
  k.limits = {{"V_at_scale", kAtScalePercent, 0, 50,
               "percent of draws with V at Liger's block edges 2^14, 2^15, 2^16 +- 1"}};
  k.operator_params = option_arguments();
  k.inputs = {{"x", {"rows", "V"}},
              TensorSpec("target", {"rows"}).indices("V", [](const Case& c) {
                return SpecialIndex{c.integer("ignore_index"), ignored_percent(c)};
              })};
  k.outputs = {TensorSpec("loss", {"rows"}).scalar_when(reduces),
               TensorSpec("z_loss", {"rows"}).when_flag("return_z_loss").no_gradient().scalar_when(reduces)};
  k.relate_inputs = peak_at_target;
  k.reference = [](const OpArgs& a) { return reference_losses(a["x"], a["target"], options_of(a)); };
  // A row's loss: lse = m + log d over V terms, (1 - ls)(lse - z_y) + ls (lse - mean z) +
  // lss lse^2, scaled by 1/n; reduced, each row rounded to the loss's dtype (a partial) and
  // summed in fp32 over rows. dx: softmax - onehot, which cancels at the target as p -> 1
  // (its magnitude holds the 1 it cancels against), stored in x's dtype and then scaled by
  // grad_output (a rounded factor).
  const auto loss_terms = [](const Case& c) {
    return row_terms(c.integer("V")) + (reduces(c) ? c.integer("rows") : 0);
  };
  const auto partials = [](const Case& c) { return reduces(c) ? 1 : 0; };
  k.bounds = {
      {"loss", Bound::sum_of(loss_terms, [](E e) {
                 const T m = magnitudes_of(e).loss_row;
                 return reduces(e.c) ? m.sum() : m;
               }).partials_when(partials)},
      {"z_loss", Bound::sum_of(loss_terms, [](E e) {
                   const T m = magnitudes_of(e).z_loss_row;
                   return reduces(e.c) ? m.sum() : m;
                 }).partials_when(partials)},
      {"dx", Bound::sum_of([](const Case& c) { return row_terms(c.integer("V")); },
                           [](E e) {
                             const T dloss = e["dloss"].abs();
                             return magnitudes_of(e).dlogits *
                                    (dloss.dim() == 0 ? dloss : dloss.unsqueeze(1));
                           })
                 .scaled_after_rounding(1)}};
  k.regions = {{"V", [](const Case& c, int64_t v) -> std::string {
                  return c.integer("V") > kMaxFused && v >= kMaxFused ? "past the first block" : "";
                }}};
  k.implementations = {
      {"rows", "Liger's row kernel: an fp32 online softmax over blocks, dx over the logits",
       forward(TrueClass::once_in_fp32), backward(correct)},
      {"rows@grad_output_scalar",
       "planted: reduction='none' scales every row by grad_output[0] (Liger before #680)",
       forward(TrueClass::once_in_fp32), backward(grad_output_first_element)},
      {"rows@dxy_rmw",
       "planted: the target's -(1 - ls) added to the softmax as stored (Liger e44a5fe8, #1268)",
       forward(TrueClass::read_modify_write), backward(true_class_read_modify_write)},
      {"rows@softcap_padding",
       "planted: softcapped, the last block's padding counts in the softmax (Liger at ead96b61)",
       forward(TrueClass::once_in_fp32, Padding::softcapped), backward(softcap_padding)}};
  k.known_defects = {
      defect("per-row grad_output read as one value").in({"rows@grad_output_scalar"})
          .hunted_by("vs_reference").shows("dx")
          // Two rows; V = 2, or one class where the z-loss alone has a gradient.
          .when([](const Case& c) {
            return c.integer("rows") == 2 && c.choice("reduction") == "none";
          })
          .because("with reduction='none' the backward scales every row's gradient by "
                   "grad_output[0] (element_mul_kernel loads grad_output as a scalar): Liger's "
                   "cross entropy until #680, its fused linear cross entropy until #1298"),
      defect("target's gradient rounded before its -1").in({"rows@dxy_rmw"})
          .hunted_by("vs_reference").shows("dx")
          // One row of two classes (p - 1 cancels), or of one class (p = 1) where an option
          // makes the stored value inexact: smoothing's eps, the softcap's 1 - tanh^2, the
          // z-loss term (each a 1-minimal case of its own).
          .when([](const Case& c) { return c.integer("rows") == 1 && c.integer("V") <= 2; })
          .because("e44a5fe8 (#1268) adds -(1 - label_smoothing) to softmax(x_y) as the loop "
                   "stored it in x's dtype: dx_y = p - 1 cancels as p -> 1 and keeps p's "
                   "rounding (be1cdc17, #1329, folds it in fp32 before the one store)"),
      defect("softcapped padding counted in the softmax").in({"rows@softcap_padding"})
          .hunted_by("vs_reference").shows("loss")
          // One padded lane (V = 3 in a block of 4) at the small softcap: at 30 the padding's
          // e^-30 is below fp32's resolution.
          .when([](const Case& c) {
            return c.integer("rows") == 1 && c.integer("V") == 3 && c.choice("softcap") == "3";
          })
          .because("the last block's lanes past V load -inf and are then softcapped whole: "
                   "softcap tanh(-inf) = -softcap, a finite logit that adds exp(-softcap - m) "
                   "to the softmax's normaliser (Liger-Kernel's head, ead96b61; "
                   "bench/gpu/findings/liger_ce_softcap_padding.md)")};
  return k;
}());
}  // namespace
}  // namespace kprop::cross_entropy
