// kl_div: the Kullback-Leibler divergence of a predicted distribution from a target one,
// over each row of y_pred, y_true [rows, cols] (cols: the vocabulary), as distillation
// losses use it. y_pred holds log-probabilities; y_true probabilities (`target` probs or
// sparse_probs, with exact zeros as one-hot teachers give) or log-probabilities
// (log_probs). Per element
//   loss = y_true (log max(y_true, eps) - y_pred)      or   exp(y_true) (y_true - y_pred),
// then reduced: none (one per element), sum, mean (over rows cols) or batchmean (over rows).
// `rows` emulates Liger-Kernel's Triton kernel (ops/kl_div.py): each row summed in fp32 in
// blocks of at most 2^14 columns, the row sums added by torch, the gradient -y_true
// (-exp(y_true)) times the cotangent and the reduction's scale. The planted variants are
// the states of that file before Liger's fix #262 (1dc65557), one code path each.
#include "harness/model/host_values.h"
#include "harness/model/random_tensor.h"
#include "harness/spec/kernel_spec.h"

namespace kprop::kl_div {
namespace {
using T = at::Tensor;
using E = const Exact&;
constexpr double kEps = 1e-10;
// Liger's blocks of columns: min(65536 / 4, next power of two of cols).
constexpr int64_t kBlock = int64_t{1} << 14, kMaxCols = int64_t{1} << 17;
constexpr int64_t kScaleRows = 2, kAtScalePercent = 5;
enum Variant { correct, block_sums_in_row_slots, mean_over_rows, gradient_over_y_pred, log_of_zero };

T acc(const T& t) { return in_accumulation_type(t); }
bool log_target(const Case& c) { return c.choice("target") == "log_probs"; }
bool reduced(const Case& c) { return c.choice("reduction") != "none"; }

// The terms of the loss in the accumulation type (float64 for the reference).
T terms(const T& y, const T& t, bool log_space, Variant v = correct) {
  if (log_space) return t.exp() * (t - y);
  return t * ((v == log_of_zero ? t : t.clamp_min(kEps)).log() - y);
}

// What the reduction divides the sum of every term by.
double divisor(const std::string& reduction, int64_t rows, int64_t cols) {
  if (reduction == "batchmean") return static_cast<double>(rows);
  if (reduction == "mean") return static_cast<double>(rows * cols);
  return 1.0;
}

OpFunction forward(Variant v) {
  return [v](const OpArgs& a) {
    const T y = acc(a["y_pred"]), t = acc(a["y_true"]);
    const std::string reduction = a.text("reduction");
    const T loss = terms(y, t, a.text("target") == "log_probs", v);
    const auto dtype = a["y_pred"].scalar_type();
    if (reduction == "none") return NamedTensors{{"loss", loss.to(dtype)}, {"total", T()}};
    const int64_t rows = y.size(0), cols = y.size(1);
    // One program per row, its blocks summed one after another into an fp32 total.
    std::vector<T> blocks = loss.split(kBlock, 1);
    T row_sums = at::zeros({rows}, loss.options());
    if (v == block_sums_in_row_slots) {
      // Before #262: block j of row r was stored to slot r + j; the program of row r + 1
      // then stored its own first block over it. What stays is each row's first block
      // (and the last row's later blocks went past the end of the buffer).
      row_sums = blocks[0].sum(1);
    } else {
      for (const T& b : blocks) row_sums = row_sums + b.sum(1);
    }
    const T total = v == mean_over_rows && reduction == "mean"
                        ? row_sums.mean(0)  // before #262: the mean of the row sums
                        : row_sums.sum() / divisor(reduction, rows, cols);
    return NamedTensors{{"loss", T()}, {"total", total.to(dtype)}};
  };
}

OpFunction backward(Variant v) {
  return [v](const OpArgs& a) {
    const T t = acc(a["y_true"]);
    const auto dtype = a["y_pred"].scalar_type();
    const std::string reduction = a.text("reduction");
    const T g = reduction == "none" ? a["dloss"] : a["dtotal"];
    // The kernel stores -y_true (-exp(y_true)) in y_true's dtype; torch then multiplies by
    // the cotangent and divides by the reduction's count, each rounded to that dtype.
    T dy = (a.text("target") == "log_probs" ? -t.exp() : -t).to(dtype) * g.to(dtype);
    const double n = divisor(reduction, t.size(0), t.size(1));
    if (n != 1.0) dy = dy / n;
    // Before #262 the kernel stored the gradient over the y_pred it had saved.
    if (v == gradient_over_y_pred) return NamedTensors{{"dy_pred", a["y_pred"].copy_(dy)}};
    return NamedTensors{{"dy_pred", dy}};
  };
}

// y_pred: log_softmax of the case's values. y_true: softmax of its own values (probs);
// the same with about half its entries zero, renormalised (sparse_probs); or their
// log_softmax (log_probs), finite however peaked. Drawn on the CPU whatever the device:
// a device's softmax would not give the host's bits.
Problem materialize(const Case& c, const c10::Device&) {
  const std::vector<int64_t> sizes{c.integer("rows"), c.integer("cols")};
  auto values = [&](uint64_t stream) {
    return float64_of(random_tensor(sizes, c.distribution, c.seed, stream, DType::float64));
  };
  const T y_pred = values(0).log_softmax(1);
  T p = values(1).softmax(1);
  if (c.choice("target") == "sparse_probs") {
    const T keep = random_tensor(sizes, Distribution::uniform, c.seed, 2, DType::float64) > 0;
    // Each row keeps its largest entry, so that it stays a distribution.
    const T top = at::zeros_like(p).scatter_(1, p.argmax(1, true), 1.0) > 0;
    p = at::where(keep.logical_or(top), p, at::zeros_like(p));
    p = p / p.sum(1, true);
  }
  const T y_true = c.choice("target") == "log_probs" ? values(1).log_softmax(1) : p;
  const auto dtype = scalar_type(c.dtype);
  return Problem{c, {{"y_pred", y_pred.to(dtype)}, {"y_true", y_true.to(dtype)}}};
}

// |each term| in float64, for the magnitudes of the bounds.
T exact_terms(E e) {
  const T t = e["y_true"], y = e["y_pred"];
  if (log_target(e.c)) return t.exp() * (t.abs() + y.abs());
  return t * (t.clamp_min(kEps).log().abs() + y.abs());
}

// |dy_pred| = p |g| / n, with exp's argument in the magnitude where p = exp(t).
T dy_pred_magnitude(E e) {
  const T t = e["y_true"];
  const T g = (reduced(e.c) ? e["dtotal"] : e["dloss"]).abs();
  const T p = log_target(e.c) ? t.exp() * (1 + t.abs()) : t.abs();
  return p * g / divisor(e.c.choice("reduction"), t.size(0), t.size(1));
}

const bool registered = register_builtin_spec([] {
  KernelSpec k("kl_div");
  k.params = {
      extent("rows", "rows (tokens)", kMaxCols, {"max_rows", 8}).by_default(int64_t{4}),
      [&] {
        ParamSpec p = extent("cols", "the vocabulary: one distribution per row", kMaxCols,
                             {"max_cols", 64});
        p.by_default(int64_t{16}).drawn([](const DrawContext& ctx) {
          // Past 2^14 columns Liger's program sums a row in several blocks (where #262
          // lost all but the first): that edge in cols_at_scale percent of draws.
          const int64_t at_scale = ctx.limit("cols_at_scale");
          return std::vector<IntOption>{
              IntOption::just(15, 1), IntOption::any_of(35, around({64, 128, 1024, 4096})),
              IntOption::up_to(static_cast<uint32_t>(50 - at_scale), 1, "max_cols"),
              IntOption::any_of(static_cast<uint32_t>(at_scale), around({kBlock}))};
        });
        p.depends_on = {"rows"};
        p.bounds = [](const Case& c, size_t) {
          return Bounds{1, c.integer("rows") <= kScaleRows ? kMaxCols : kBlock,
                        "past 2^14 cols, at most 2 rows"};
        };
        return p;
      }(),
      choice_param("reduction", "none (one loss per element), sum, mean (over every element) or "
                   "batchmean (over rows)", {"batchmean", "sum", "mean", "none"}, {25, 25, 25, 25}),
      choice_param("target", "y_true as probabilities, as probabilities of which about half are "
                   "zero (one-hot teachers), or as log-probabilities (log_target)",
                   {"probs", "sparse_probs", "log_probs"}, {40, 30, 30})};
  k.limits = {{"cols_at_scale", kAtScalePercent, 0, 50,
               "percent of draws with cols at Liger's block edge, 2^14 +- 1"}};
  k.operator_params = {"reduction", "target"};
  k.inputs = {{"y_pred", {"rows", "cols"}}, TensorSpec("y_true", {"rows", "cols"}).no_gradient()};
  k.outputs = {TensorSpec("loss", {"rows", "cols"}).when([](const Case& c) { return !reduced(c); }),
               TensorSpec("total", {}).when(reduced)};
  k.materialize = materialize;
  k.reference = [](const OpArgs& a) {
    const T loss = terms(a["y_pred"], a["y_true"], a.text("target") == "log_probs");
    const std::string reduction = a.text("reduction");
    if (reduction == "none") return NamedTensors{{"loss", loss}, {"total", T()}};
    return NamedTensors{{"loss", T()},
                        {"total", loss.sum() / divisor(reduction, loss.size(0), loss.size(1))}};
  };
  // A term: a log (or exp) and a difference, then a product: the error of each is
  // proportional to |y_true| (|log y_true| + |y_pred|). The total sums rows x cols such
  // terms (blocks, then rows: at most cols + rows additions deep), then divides.
  k.bounds = {
      {"loss", Bound::elementwise(4, exact_terms)},
      {"total", Bound::sum_of([](const Case& c) { return c.integer("rows") + c.integer("cols") + 6; },
                              [](E e) {
                                return exact_terms(e).sum() /
                                       divisor(e.c.choice("reduction"), e["y_pred"].size(0),
                                               e["y_pred"].size(1));
                              })},
      // -p, or -exp(t) in fp32 (log_probs), stored in the output dtype, times the cotangent,
      // divided by the reduction's count. A GPU's exp is exp2(t log2 e): rounding its
      // argument errs by |t| u relative, the approximate exp2 by about 2 u more.
      {"dy_pred", Bound::elementwise(4, dy_pred_magnitude, 2)}};
  k.implementations = {
      {"rows", "one row per program, summed in fp32 blocks of 2^14 columns", forward(correct),
       backward(correct)},
      {"rows@block_slots", "planted (before #262): a row's block sums stored in the next rows' slots",
       forward(block_sums_in_row_slots), backward(correct)},
      {"rows@mean_over_rows", "planted (before #262): 'mean' divides by rows, not rows x cols",
       forward(mean_over_rows), backward(correct)},
      {"rows@grad_over_input", "planted (before #262): the backward stores dy_pred over y_pred",
       forward(correct), backward(gradient_over_y_pred)},
      {"rows@log_zero", "planted (before #262): log(y_true) without the eps floor",
       forward(log_of_zero), backward(correct)}};
  k.known_defects = {
      defect("row blocks past the first lost").in({"rows@block_slots"}).hunted_by("vs_reference")
          .within({{"cols_at_scale", 50}}).shows("total")
          .when([](const Case& c) { return c.integer("cols") > kBlock && c.integer("rows") == 1; })
          .because("each block's sum was stored to loss_ptr and loss_ptr advanced by one: the "
                   "next row's program overwrote it, so only a row's first 2^14 columns count"),
      defect("mean divided by rows only").in({"rows@mean_over_rows"}).hunted_by("vs_reference")
          .shows("total").when("rows=1 cols=2 reduction=mean target=probs")
          .because("the row sums were averaged over rows (output.mean(dim=0)), which is "
                   "batchmean, not the mean over rows x cols"),
      defect("gradient written over y_pred").in({"rows@grad_over_input"}).hunted_by("vs_reference")
          .shows("y_pred overwritten by the backward").when("rows=1 cols=1 reduction=batchmean target=probs")
          .because("the backward kernel stored -y_true over the y_pred it saved"),
      defect("log of a zero target").in({"rows@log_zero"}).hunted_by("vs_reference")
          .shows("total")
          // As many columns as it takes the seed's mask to zero one.
          .when([](const Case& c) {
            return c.integer("rows") == 1 && c.choice("reduction") == "batchmean" &&
                   c.choice("target") == "sparse_probs";
          })
          .because("y_true log(y_true) is 0 log 0 = NaN without the eps floor: one-hot "
                   "and sparse teachers have zeros")};
  return k;
}());
}  // namespace
}  // namespace kprop::kl_div
