// layer_norm: y = (x - mean(x)) / sqrt(var(x) + eps) · w + b over each row of x [rows, cols],
// w and b [cols] each optional (absent: w = 1, b = 0). `rows` emulates Liger-Kernel's Triton
// LayerNorm (ops/layer_norm.py at ead96b61) branch by branch:
//   forward   one program per row, the row in fp32: mean = sum(x) / n, var = the masked
//             sum((x - mean)^2) / n, rstd = rsqrt(var + eps); y = (x - mean) rstd w + b in
//             fp32, rounded once. It stores mean and rstd in x's dtype for the backward.
//   backward  kPrograms programs (one per SM: 132 on the H200) of ceil(rows / kPrograms)
//             rows each. x_hat = (x - mean) rstd from the stored (rounded) mean and rstd;
//             dx = (w dy - (x_hat c1 + c2)) rstd with c1 = mean(x_hat w dy), c2 = mean(w dy),
//             rounded to x's dtype. dw = sum dy x_hat and db = sum dy as one fp32 partial per
//             program, the partials summed by torch in fp32, then rounded to w's dtype.
// The planted variants are code paths Liger's kernel has had, never an injected number.
#include <optional>

#include "harness/model/host_values.h"
#include "harness/model/random_tensor.h"
#include "harness/spec/kernel_spec.h"
#include "kernels/common/error_units.h"

namespace kprop::layer_norm {
namespace {
using T = at::Tensor;
using E = const Exact&;
constexpr double kEps = 1e-6;  // LigerLayerNorm's default (transformers/layer_norm.py)
// Liger holds a row in one block (BLOCK_SIZE = next power of two, at most 64 Ki columns).
constexpr int64_t kMaxCols = int64_t{1} << 16, kMaxRows = int64_t{1} << 16;
// The backward's grid: one program per SM. Past kPrograms rows a program takes two rows.
constexpr int64_t kPrograms = 132, kGridCols = 64;
enum Variant { correct, variance_over_block, bf16_stores };

T acc(const T& t) { return in_accumulation_type(t); }
int64_t block_of(int64_t cols) {
  int64_t b = 1;
  while (b < cols) b *= 2;
  return b;
}
// What a tensor becomes when stored in `dtype` and read back.
T stored(const T& t, at::ScalarType dtype) { return t.to(dtype).to(t.scalar_type()); }

// The forward's statistics of each row, in the accumulation type, [rows, 1].
struct Stats {
  T mean, rstd;
};
Stats stats(const T& xf, Variant v) {
  const int64_t n = xf.size(1);
  const T mean = xf.sum(-1, true) / n;
  T xc = xf - mean;
  if (v == variance_over_block)
    // From the first kernel (9b0f8f7f) to f4a51fb8 (#582), as at 21c8215b: var =
    // tl.sum((X_row - mean) * (X_row - mean)) / n_cols over the whole block, whose masked
    // lanes load 0: each adds mean^2 where n is no power of two. (That kernel also computed
    // in x's dtype; only the variance's code path is planted, on today's fp32 row.)
    xc = at::constant_pad_nd(xf, {0, block_of(n) - n}, 0) - mean;
  const T var = (xc * xc).sum(-1, true) / n;
  return {mean, (var + kEps).rsqrt()};
}

OpFunction forward(Variant v) {
  return [v](const OpArgs& a) {
    const T xf = acc(a["x"]);
    const Stats s = stats(xf, v);
    T y = (xf - s.mean) * s.rstd;
    if (a["w"].defined()) y = y * acc(a["w"]);
    if (a["b"].defined()) y = y + acc(a["b"]);
    return NamedTensors{{"y", y.to(a["x"].scalar_type())}};
  };
}

// dw or db: one fp32 partial per program (rows_per_program = ceil(rows / kPrograms)), the
// partials summed. `through` is the dtype a partial is stored in on the way, if any.
T program_sums(const T& terms, std::optional<at::ScalarType> through = std::nullopt) {
  const int64_t rows = terms.size(0), cols = terms.size(1);
  const int64_t per = (rows + kPrograms - 1) / kPrograms;
  const int64_t programs = (rows + per - 1) / per;  // the rest hold zeros
  T partials = at::constant_pad_nd(terms, {0, 0, 0, programs * per - rows}, 0)
                   .view({programs, per, cols})
                   .sum(1);
  if (through) partials = stored(partials, *through);
  return partials.sum(0);
}

OpFunction backward(Variant v) {
  return [v](const OpArgs& a) {
    const at::ScalarType dtype = a["x"].scalar_type();
    const T xf = acc(a["x"]), dy = acc(a["dy"]);
    const int64_t n = xf.size(1);
    const Stats s = stats(xf, v);
    // The backward reads mean and rstd as the forward stored them, in x's dtype.
    const T mean = stored(s.mean, dtype), rstd = stored(s.rstd, dtype);
    const T xhat = (xf - mean) * rstd;
    const T wdy = a["w"].defined() ? acc(a["w"]) * dy : dy;
    const T c1 = (xhat * wdy).sum(-1, true) / n;
    const T c2 = wdy.sum(-1, true) / n;
    T dx = (wdy - (xhat * c1 + c2)) * rstd;
    // Until f4a51fb8 (#582), as at 21c8215b: triton_dtype = tl.float32 if X.dtype ==
    // torch.float32 else tl.bfloat16, so dx and the dw/db partials went through bf16 for
    // fp16 inputs too; the partials were then stored in w's dtype (_DW = torch.empty(...,
    // dtype=W.dtype)), bf16 or fp16, which holds a bf16 value exactly in range.
    std::optional<at::ScalarType> through;
    if (v == bf16_stores && dtype != at::kFloat && dtype != at::kDouble) {
      dx = stored(dx, at::kBFloat16);
      through = at::kBFloat16;
    }
    NamedTensors out{{"dx", dx.to(dtype)}};
    if (a["w"].defined()) out.set("dw", program_sums(dy * xhat, through).to(a["w"].scalar_type()));
    if (a["b"].defined()) out.set("db", program_sums(dy, through).to(a["b"].scalar_type()));
    return out;
  };
}

// --- Bounds (float64, from the exact inputs) ------------------------------------------
// Per row of the exact x: its mean, rstd, x_hat, A = mean|x| (the size of the rounding
// errors of the fp32 mean, hence of x - mean) and K = 1 + A mean|x - mean| / (var + eps):
// rstd's relative error in units of gamma, large where the row's mean dwarfs its spread
// (x - mean cancels).
struct Row {
  T mean, rstd, xhat, a, k;
};
Row exact_row(E e) {
  const T x = e["x"];
  const T mean = x.mean(-1, true), xc = x - mean;
  const T var = (xc * xc).mean(-1, true);
  const T rstd = (var + kEps).rsqrt();
  const T a = x.abs().mean(-1, true);
  return {mean, rstd, xc * rstd, a, 1 + a * xc.abs().mean(-1, true) / (var + kEps)};
}
T abs_w(E e) { return e["w"].defined() ? e["w"].abs() : at::ones({}, at::kDouble); }
// x_hat as the backward computes it errs by gamma eg + u_out eu: the fp32 mean's error
// (rstd A), rstd's (|x_hat| K) and two products; and the mean and rstd it reads rounded
// to x's dtype (rstd |mean| + |x_hat|).
T xhat_gamma(const Row& r) { return r.rstd * r.a + r.xhat.abs() * (r.k + 2); }
T xhat_rounded(const Row& r) { return r.rstd * r.mean.abs() + r.xhat.abs(); }

int64_t backward_terms(const Case& c) { return 3 * c.integer("cols") + 16; }
int64_t dw_terms(const Case& c) { return c.integer("rows") + 2 * c.integer("cols") + 8; }

const bool registered = register_builtin_spec([] {
  KernelSpec k("layer_norm");
  // One short of, on and one past the row's block.
  const std::vector<int64_t> col_edges = around({64, 128, 256, 512, 1024, 4096});
  k.params = {
      extent("rows", "rows of x (tokens)", kMaxRows, {"max_rows", 8})
          .by_default(int64_t{4})
          // The backward's grid: kPrograms - 1 .. kPrograms + 1 rows, where a program first
          // takes two rows.
          .drawn(std::vector<IntOption>{IntOption::just(30, 1), IntOption::just(10, 2),
                                        IntOption::up_to(55, 1, "max_rows"),
                                        IntOption::any_of(5, around({kPrograms}))}),
      [&] {
        ParamSpec p = extent("cols", "the hidden size: a row, normalised on its own", kMaxCols,
                             {"max_cols", 64});
        p.by_default(int64_t{16}).drawn(std::vector<IntOption>{
            IntOption::just(15, 1), IntOption::any_of(35, col_edges), IntOption::up_to(50, 1, "max_cols")});
        p.depends_on = {"rows"};
        p.bounds = [](const Case& c, size_t) {
          return Bounds{1, c.integer("rows") >= kPrograms - 1 ? kGridCols : kMaxCols,
                        "at the grid's edge (131 rows and more), cols <= 64"};
        };
        return p;
      }(),
      flag_param("weight", "a weight w [cols] (absent: 1)").by_default(true).true_in_percent(80),
      flag_param("bias", "a bias b [cols] (absent: 0)").by_default(true).true_in_percent(80)};
  k.inputs = {{"x", {"rows", "cols"}},
              TensorSpec("w", {"cols"}).when_flag("weight").neutral(1),
              TensorSpec("b", {"cols"}).when_flag("bias").neutral(0)};
  k.outputs = {{"y", {"rows", "cols"}}};
  k.reference = [](const OpArgs& a) {
    const T x = a["x"], xc = x - x.mean(-1, true);
    T y = xc * ((xc * xc).mean(-1, true) + kEps).rsqrt();
    if (a["w"].defined()) y = y * a["w"];
    if (a["b"].defined()) y = y + a["b"];
    return NamedTensors{{"y", y}};
  };
  // y: the fp32 mean errs by gamma_n A, so x - mean by gamma (A + |x - mean|); var, a sum of
  // their squares, by gamma (A mean|x - mean| + var); rstd by gamma_(2n+4) K relative. Then
  // three operations: within gamma_(2n+8) of |w| rstd A + |w x_hat| (K + 2) + |b|.
  // dx = rstd (w dy - x_hat c1 - c2) cancels: bounded by the magnitudes of its terms, each
  // with x_hat's error (the backward's x_hat reads the rounded mean and rstd: u_out
  // rstd |mean|, however small x - mean is), c1's (x_hat's through a sum) and rstd's.
  // dw: a sum over rows of dy x_hat, each with x_hat's error; db: a sum over rows of dy.
  k.bounds = {
      {"y", Bound::sum_of([](const Case& c) { return 2 * c.integer("cols") + 8; },
                          [](E e) {
                            const Row r = exact_row(e);
                            return abs_w(e) * (r.rstd * r.a + r.xhat.abs() * (r.k + 2)) +
                                   e.or_zero("b").abs();
                          })},
      {"dx", Bound::sum_of(backward_terms,
                           [](E e) {
                             const Row r = exact_row(e);
                             const T wdy = (abs_w(e) * e["dy"]).abs(), xh = r.xhat.abs();
                             const T eg = xhat_gamma(r), eu = xhat_rounded(r);
                             const T c1 = (xh * wdy).mean(-1, true), c2 = wdy.mean(-1, true);
                             const T g = r.rstd * (c1 * eg + xh * ((wdy * eg).mean(-1, true) + 2 * c1) +
                                                   c2 + 4 * (wdy + xh * c1 + c2)) +
                                         e["dx"].abs() * (r.k + 1);
                             const T u = r.rstd * (c1 * eu + xh * (wdy * eu).mean(-1, true)) + e["dx"].abs();
                             // x_hat's error d times c1's, mean(d w dy): second order, but d
                             // is not small where the rounded mean is far from the row's.
                             const Units units(e.c, backward_terms(e.c));
                             const T d = eg * units.gamma + eu * units.u;
                             return units.magnitude(g * units.gamma + u * units.u +
                                                    2 * r.rstd * d * (wdy * d).mean(-1, true));
                           },
                           1)},
      {"dw", Bound::sum_of(dw_terms,
                           [](E e) {
                             const Row r = exact_row(e);
                             const T dy = e["dy"].abs();
                             const T g = (dy * (xhat_gamma(r) + 2 * r.xhat.abs())).sum(0);
                             const T u = (dy * xhat_rounded(r)).sum(0);
                             return Units(e.c, dw_terms(e.c)).magnitude(g, u);
                           },
                           1)},
      {"db", Bound::sum_over("rows", [](E e) { return e["dy"].abs().sum(0); })}};
  // dw and db are sums over rows: one fp32 partial per program, then torch's sum.
  k.reordered_by_layout = {"dw", "db"};
  k.oracle_runs_on_any_device = true;  // ATen alone: reference, magnitudes
  k.implementations = {
      {"rows", "Liger's row kernel: the row in fp32, mean and rstd kept in x's dtype for the "
               "backward, dw/db as per-program fp32 partials", forward(correct), backward(correct)},
      {"rows@pow2", "planted (Liger before #582): the variance summed over the padded block",
       forward(variance_over_block), backward(variance_over_block)},
      {"rows@bf16", "planted (Liger at 21c8215b): dx and the dw/db partials stored through bf16",
       forward(correct), backward(bf16_stores)}};
  k.known_defects = {
      defect("variance over the padded block").in({"rows@pow2"}).hunted_by("vs_reference")
          .shows("y")
          // Three columns, in the first row whose mean is not too small to show.
          .when([](const Case& c) {
            return c.integer("cols") == 3 && !c.flag("weight") && !c.flag("bias");
          })
          .because("the forward's var sums (x - mean)^2 over the power-of-two block, whose "
                   "masked lanes hold 0 - mean: n not a power of two inflates var by "
                   "(block - n) mean^2 / n (Liger #582, fixed in f4a51fb8)"),
      defect("gradients stored through bf16").in({"rows@bf16"}).hunted_by("vs_reference")
          .shows("db")
          // In float16, a few elements: as many as it takes for one dy that bf16 cannot hold
          // (seven in eight cannot). In bfloat16, past kPrograms rows, where a program's
          // partial holds two rows' sum.
          .when([](const Case& c) {
            if (!c.flag("bias") || c.flag("weight")) return false;
            const int64_t rows = c.integer("rows");
            return (c.dtype == DType::float16 && rows * c.integer("cols") <= 4) ||
                   (c.dtype == DType::bfloat16 && rows > kPrograms);
          })
          .because("the backward picks triton_dtype = float32 if x is float32 else bfloat16 and "
                   "stores the per-program dw/db partials (and dx) in it: fp16 inputs lose three "
                   "bits, bf16 ones a rounding per partial (Liger before f4a51fb8, #582)")};
  return k;
}());
}  // namespace
}  // namespace kprop::layer_norm
