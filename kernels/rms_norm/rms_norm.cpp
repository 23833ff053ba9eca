// rms_norm: y = x / sqrt(mean(x^2) + eps) · (offset + w), over each row of x [rows, cols],
// as Llama (offset 0) and Gemma (offset 1) normalise their hidden states. `rows` emulates a
// row kernel in the two casting modes Hugging Face's models use and Liger-Kernel's Triton
// kernel follows (ops/rms_norm.py):
//   llama  the row in fp32, x·rstd rounded to x's dtype, then times (offset + w);
//   gemma  everything in fp32, rounded once at the end.
// The planted variants are code paths such a kernel has had, never an injected number.
#include "harness/model/host_values.h"
#include "harness/spec/kernel_spec.h"

namespace kprop::rms_norm {
namespace {
using T = at::Tensor;
using E = const Exact&;
constexpr double kEps = 1e-6;
// Liger's row kernel holds a whole row (BLOCK_SIZE = next power of two, at most 64 Ki); for
// rows >= 2^15 and rows of at most 256 it switches to a kernel of 16-row blocks.
constexpr int64_t kMaxCols = int64_t{1} << 16, kMaxRows = int64_t{1} << 17;
constexpr int64_t kBlockPathRows = int64_t{1} << 15, kBlockPathCols = 256, kBlockRows = 16;
constexpr int64_t kScaleCols = 64, kAtScalePercent = 5;
enum Variant { correct, offset_dropped_in_backward, block_grid_floored };

// A row kernel takes its tensors contiguous (Liger's ensure_contiguous).
T acc(const T& t) { return in_accumulation_type(t); }
bool llama(const OpArgs& a) { return a.text("casting") == "llama"; }

// 1 / sqrt(mean(x^2) + eps) per row, in the accumulation type, as [rows, 1].
T rstd(const T& xf) { return ((xf * xf).sum(-1, true) / xf.size(-1) + kEps).rsqrt(); }
// offset + w in the accumulation type.
T scale(const OpArgs& a) { return acc(a["w"]) + static_cast<double>(a.integer("offset")); }
// x·rstd as the casting mode keeps it: rounded to x's dtype (llama) or not (gemma).
T normed(const OpArgs& a, const T& xf, const T& r) {
  const T n = xf * r;
  return llama(a) ? n.to(a["x"].scalar_type()).to(n.scalar_type()) : n;
}

OpFunction forward() {
  return [](const OpArgs& a) {
    const T xf = acc(a["x"]);
    const T n = normed(a, xf, rstd(xf));
    // Liger: without a weight, y is the normalised row (the offset is not applied).
    const T y = a["w"].defined() ? n * scale(a) : n;
    return NamedTensors{{"y", y.to(a["x"].scalar_type())}};
  };
}

OpFunction backward(Variant v) {
  return [v](const OpArgs& a) {
    const T xf = acc(a["x"]), dy = acc(a["dy"]), r = rstd(xf);
    const int64_t rows = xf.size(0), cols = xf.size(1);
    T m = dy;
    if (a["w"].defined())
      m = dy * (v == offset_dropped_in_backward ? acc(a["w"]) : scale(a));
    T dx = r * m - r * r * r / cols * (m * xf).sum(-1, true) * xf;
    if (v == block_grid_floored && rows >= kBlockPathRows && cols <= kBlockPathCols)
      // The block kernel's grid of rows / 16 programs, floored: the last rows are never
      // computed, and dx keeps the zeros it was allocated with there.
      dx = at::cat({dx.slice(0, 0, rows / kBlockRows * kBlockRows),
                    at::zeros_like(dx.slice(0, rows / kBlockRows * kBlockRows))});
    NamedTensors out{{"dx", dx.to(a["x"].scalar_type())}};
    if (!a["w"].defined()) return out;
    // llama: each dy (x rstd) is a product of two tensors in x's dtype, rounded to it
    // before the fp32 sum over rows (Liger's `dY_row * (X_row * rstd_row).to(X_dtype)`, as
    // autograd through HF's LlamaRMSNorm: weight * hidden_states.to(input_dtype)).
    T products = dy * normed(a, xf, r);
    if (llama(a)) products = products.to(a["x"].scalar_type()).to(products.scalar_type());
    const T dw = products.sum(0);
    out.set("dw", dw.to(a["w"].scalar_type()));
    return out;
  };
}

// The exact 1 / sqrt(mean(x^2) + eps), [rows, 1].
T exact_rstd(E e) { return rstd(e["x"]); }
T exact_scale(E e) {
  const double offset = static_cast<double>(e.c.integer("offset"));
  return e["w"].defined() ? e["w"] + offset : at::ones({}, at::kDouble);
}

const bool registered = register_builtin_spec([] {
  KernelSpec k("rms_norm");
  // One short of, on and one past the row kernel's blocks.
  const std::vector<int64_t> col_edges = around({64, 128, 256, 1024, 4096});
  k.params = {
      extent("rows", "rows of x (tokens)", kMaxRows, {"max_rows", 8})
          .by_default(int64_t{4})
          .drawn([](const DrawContext& ctx) {
            // Liger's block kernel takes rows >= 2^15 (of at most 256 columns): that edge in
            // rows_at_scale percent of draws, each a case of 2^21 elements or so.
            const int64_t at_scale = ctx.limit("rows_at_scale");
            return std::vector<IntOption>{
                IntOption::just(30, 1), IntOption::just(10, 2), IntOption::up_to(60 - at_scale, 1, "max_rows"),
                IntOption::any_of(static_cast<uint32_t>(at_scale), around({kBlockPathRows}))};
          }),
      [&] {
        ParamSpec p = extent("cols", "the hidden size: a row, normalised on its own", kMaxCols,
                             {"max_cols", 64});
        p.by_default(int64_t{16}).drawn(std::vector<IntOption>{
            IntOption::just(15, 1), IntOption::any_of(35, col_edges), IntOption::up_to(50, 1, "max_cols")});
        // A case at scale keeps its rows short: what changes there is the block kernel.
        p.depends_on = {"rows"};
        p.bounds = [](const Case& c, size_t) {
          return Bounds{1, c.integer("rows") >= kBlockPathRows ? kScaleCols : kMaxCols,
                        "at 2^15 rows and more, cols <= 64"};
        };
        return p;
      }(),
      flag_param("weight", "a weight w [cols] (elementwise affine)").by_default(true).true_in_percent(80),
      param_spec("offset", ParamType::integer, "added to w: 0 (Llama) or 1 (Gemma: y = n (1 + w))",
                 int64_t{0}).within(0, 1),
      choice_param("casting",
                   "where the row kernel rounds: llama (x rstd in x's dtype, then times w) or "
                   "gemma (all in fp32, one rounding at the end)",
                   {"llama", "gemma"}, {50, 50})};
  k.limits = {{"rows_at_scale", kAtScalePercent, 0, 60,
               "percent of draws with rows at the block kernel's edge, 2^15 +- 1"}};
  k.operator_params = {"offset", "casting"};
  k.inputs = {{"x", {"rows", "cols"}}, TensorSpec("w", {"cols"}).when_flag("weight")};
  k.outputs = {{"y", {"rows", "cols"}}};
  k.reference = [](const OpArgs& a) {
    const T n = a["x"] * rstd(a["x"]);
    const double offset = static_cast<double>(a.integer("offset"));
    return NamedTensors{{"y", a["w"].defined() ? n * (a["w"] + offset) : n}};
  };
  // Sums of squares of a row (cols positive terms: relative error gamma_cols), then /n, +eps,
  // rsqrt (a few ulps; the square root halves the sum's relative error), and two or three
  // products: within gamma_(cols + 8) of |y|; llama rounds x rstd to x's dtype on the way.
  // dx = r (o + w) dy - r^3 / n x sum(dy (o + w) x): r's error counts three times in the
  // second term. dw sums rows of dy (x r), each with r's error; llama rounds x r to x's
  // dtype and then each product dy (x r) too: two rounded partials, one in gemma.
  k.bounds = {
      {"y", Bound::sum_of([](const Case& c) { return c.integer("cols") + 8; }, {}, 1)},
      {"dx", Bound::sum_of([](const Case& c) { return 2 * c.integer("cols") + 12; },
                           [](E e) {
                             const T r = exact_rstd(e), m = (e["dy"] * exact_scale(e)).abs();
                             return r * m + r.pow(3) / e["x"].size(1) *
                                                (m * e["x"].abs()).sum(-1, true) * e["x"].abs();
                           })},
      {"dw", Bound::sum_of([](const Case& c) { return c.integer("rows") + c.integer("cols") + 8; },
                           [](E e) { return (e["dy"] * e["x"] * exact_rstd(e)).abs().sum(0); })
                 .partials_when([](const Case& c) { return c.choice("casting") == "llama" ? 2 : 1; })}};
  // The rows a block kernel's last program holds, and the rows past the 2^15 edge.
  k.oracle_runs_on_any_device = true;  // ATen alone: reference, magnitudes, regions
  k.regions = {{"rows", [](const Case& c, int64_t row) -> std::string {
                  const int64_t rows = c.integer("rows");
                  return rows >= kBlockPathRows && row >= rows / kBlockRows * kBlockRows ? "last rows" : "";
                }}};
  k.reordered_by_layout = {"dw"};  // a sum over rows, in an order that may follow the strides
  k.implementations = {
      {"rows", "one row at a time in fp32, Liger's llama and gemma casting modes", forward(),
       backward(correct)},
      {"rows@offset", "planted: the backward scales dy by w, not offset + w", forward(),
       backward(offset_dropped_in_backward)},
      {"rows@block_tail", "planted: at 2^15 rows and more, the block kernel drops the last rows",
       forward(), backward(block_grid_floored)}};
  k.known_defects = {
      defect("offset dropped in the backward").in({"rows@offset"}).hunted_by("vs_reference")
          .shows("dx").when("rows=1 cols=2 weight=true offset=1").first_found_by_kprop()
          .because("dx takes dy w where Gemma's y = n (1 + w) needs dy (1 + w)"),
      defect("last rows dropped at scale").in({"rows@block_tail"}).hunted_by("vs_reference")
          .within({{"rows_at_scale", 60}}).shows("dx [last rows]")
          // One column shows it where x is small (dx = dy eps / (x^2 + eps)^1.5), else two.
          .when([](const Case& c) { return c.integer("rows") == kBlockPathRows + 1 && c.integer("cols") <= 2; })
          .first_found_by_kprop()
          .because("the 16-row block kernel (2^15 rows and more) is launched on rows / 16 "
                   "programs, floored, not rounded up: a remainder of rows gets no dx")};
  return k;
}());
}  // namespace
}  // namespace kprop::rms_norm
