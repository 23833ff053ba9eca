// The schema of causal_conv1d cases: its parameters, their bounds and dependencies, and
// the edges the generator leans on — segment lengths at the window (1, W-1, W, W+1) and
// at tile edges (BT-1, BT, BT+1, the tiles tiling.h can produce), the real core counts of
// Ascend devices, and the channel widths the device kernel accepts.
#include "kernels/causal_conv1d/schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>

#include "core/errors.h"
#include "kernels/causal_conv1d/tiling.h"

namespace kprop::causal_conv1d {

namespace {

constexpr int64_t kMaxLength = 1 << 20;
constexpr int64_t kMaxSequences = 64;
constexpr int64_t kChannelQuantum = 32;          // BD with an initial state
constexpr int64_t kStatelessBlockChannels = 256;  // BD of the forward without one

// Every row tile BT the Ascend kernels can use, read off tiling.h's formulas.
const std::vector<int64_t>& tile_rows() {
  static const std::vector<int64_t> rows = [] {
    std::set<int64_t> bt;
    for (int64_t cores = 1; cores <= 64; ++cores)
      for (int64_t r = 1; r <= 512; ++r)
        for (bool h0 : {false, true}) {
          bt.insert(forward_tiles(r, h0, cores).BT);
          for (int64_t W = 1; W <= 8; ++W)
            for (bool clamp : {false, true}) bt.insert(backward_tiles(r, W, h0, cores, clamp).BT);
        }
    return std::vector<int64_t>(bt.begin(), bt.end());
  }();
  return rows;
}

std::vector<int64_t> tile_edges(int64_t longest) {
  std::vector<int64_t> edges;
  for (int64_t bt : tile_rows())
    for (int64_t L : {bt - 1, bt, bt + 1})
      if (L >= 1 && L <= longest) edges.push_back(L);
  return edges;
}

std::vector<int64_t> power_of_two_edges(int64_t largest_power) {
  std::vector<int64_t> edges;
  for (int64_t p = 1; p <= largest_power; p *= 2)
    for (int64_t L : {p - 1, p, p + 1})
      if (L >= 1) edges.push_back(L);
  return edges;
}

bool dense(const Case& c) { return c.has("layout") && c.choice("layout") == "dense"; }

// Multiples of `quantum` toward `quantum` itself (D keeps its device-legal width).
std::vector<int64_t> toward_quantum(int64_t x, int64_t quantum) {
  std::vector<int64_t> out;
  const int64_t k = x / quantum;
  if (k <= 1) return out;
  out.push_back(quantum);
  for (int64_t diff = (k - 1) / 2; diff != 0; diff /= 2) out.push_back((k - diff) * quantum);
  if (out.back() != (k - 1) * quantum) out.push_back((k - 1) * quantum);
  return out;
}

// a * b, or nullopt past INT64_MAX.
std::optional<int64_t> times(std::optional<int64_t> a, int64_t b) {
  int64_t out = 0;
  if (!a || __builtin_mul_overflow(*a, b, &out)) return std::nullopt;
  return out;
}

std::vector<std::string> size_problems(const Case& c) {
  // Bounds alone allow D = 16384 with 2^26 tokens, 2^40 elements: a case that would
  // exhaust memory.
  const int64_t limit = max_elements();
  const auto& L = c.integers("lengths");
  std::optional<int64_t> tokens = 0;
  for (const int64_t l : L)
    if (!tokens || __builtin_add_overflow(*tokens, l, &*tokens)) tokens = std::nullopt;
  const int64_t D = c.integer("D"), W = c.integer("W"), N = static_cast<int64_t>(L.size());
  std::vector<std::pair<std::string, std::optional<int64_t>>> sizes{
      {"x", times(tokens, D)}};
  if (c.flag("initial_state")) sizes.push_back({"initial_state", times(times(N, D), W)});
  std::vector<std::string> problems;
  for (const auto& [name, n] : sizes)
    if (!n || *n > limit)
      problems.push_back(fmt::format(
          "{}: {} would hold {} elements, more than the limit {} (KPROP_MAX_ELEMENTS raises it)",
          name == "x" ? "lengths" : name, name, n ? std::to_string(*n) : "over 2^63", limit));
  return problems;
}

Schema make_schema() {
  Schema s;
  s.kernel = "causal_conv1d";
  s.limits = {
      {"max_segments", 8, 1, kMaxSequences, "most packed segments a case draws"},
      {"max_length", 64, 1, kMaxLength / 4, "typical longest segment (4x is drawn rarely)"},
  };

  ParamSpec W = param_spec("W", ParamType::integer, "convolution window (taps)", int64_t{2});
  W.default_value = int64_t{4};
  W.static_bounds = {1, 256};
  // 4 is the shipped width; 2..4 is where most models live; 8 is the widest `clamped` takes.
  W.draw = [](const DrawContext&) {
    return std::vector<IntOption>{IntOption::just(40, 4), IntOption::just(15, 2),
                                  IntOption::just(15, 3), IntOption::just(8, 5),
                                  IntOption::just(6, 6),  IntOption::just(6, 7),
                                  IntOption::just(10, 8)};
  };

  ParamSpec layout = choice_param(
      "layout", "packed: B = 1 and cu_seqlens; dense: B sequences of equal length",
      {"packed", "dense"}, {80, 20});

  ParamSpec lengths = param_spec("lengths", ParamType::integers, "length of each sequence",
                                 std::vector<int64_t>{1});
  lengths.default_value = std::vector<int64_t>{16};
  lengths.depends_on = {"W", "layout"};
  lengths.list.min_count = 1;
  lengths.list.max_count = kMaxSequences;
  // Few segments most of the time: most packing bugs need only two neighbours. Dense
  // batches are small: the interesting part is B > 1 with equal lengths.
  lengths.list.drawn_max_count = [](const DrawContext& ctx) {
    const int64_t most = ctx.space.limit(schema(), "max_segments");
    return dense(ctx.so_far) ? std::min<int64_t>(most, 4) : most;
  };
  lengths.bounds = [](const Case& c, size_t i) {
    if (i > 0 && dense(c) && !c.integers("lengths").empty()) {
      const int64_t first = c.integers("lengths")[0];
      return Bounds{first, first, "dense layout: every sequence as long as the first"};
    }
    return Bounds{1, kMaxLength};
  };
  // Mostly at the window and tile boundaries, where chunks of a packed batch meet the
  // edges of their sequences.
  lengths.draw = [](const DrawContext& ctx) {
    const int64_t typical = ctx.space.limit(schema(), "max_length"), longest = 4 * typical;
    const int64_t W = ctx.so_far.integer("W");
    const auto fit = [longest](int64_t L) { return std::clamp<int64_t>(L, 1, longest); };
    return std::vector<IntOption>{
        IntOption::just(14, 1),
        IntOption::just(12, fit(W - 1)),
        IntOption::just(12, fit(W)),
        IntOption::just(8, fit(W + 1)),
        IntOption::any_of(18, tile_edges(longest)),
        IntOption::any_of(12, power_of_two_edges(2 * typical)),
        IntOption::range(20, 1, typical),
        IntOption::range(4, 1, longest),
    };
  };

  ParamSpec splits = param_spec("splits", ParamType::integers,
                                "split point per sequence for chunked (empty: each in half)",
                                std::vector<int64_t>{});
  splits.depends_on = {"lengths", "W"};
  splits.list.same_count_as = "lengths";
  splits.list.may_be_empty = true;
  splits.list.max_count = kMaxSequences;
  splits.bounds = [](const Case& c, size_t i) {
    const auto& L = c.integers("lengths");
    return Bounds{1, i < L.size() ? L[i] : 1, "a split lies inside its sequence"};
  };
  splits.draw = [](const DrawContext& ctx) {
    const int64_t W = ctx.so_far.integer("W");
    const int64_t L = ctx.so_far.integers("lengths")[ctx.index];
    return std::vector<IntOption>{IntOption::just(25, 1),     IntOption::just(15, W - 1),
                                  IntOption::just(15, W),     IntOption::just(15, L - 1),
                                  IntOption::just(15, L),     IntOption::range(15, 1, L)};
  };

  ParamSpec h0 =
      param_spec("initial_state", ParamType::flag, "an initial state h0 [N, D, W]", false);
  h0.percent_true = 75;
  h0.default_value = true;

  ParamSpec D = param_spec("D", ParamType::integer, "channels", int64_t{kChannelQuantum});
  D.depends_on = {"initial_state"};
  D.static_bounds = {1, 16384};
  // Without h0 the device forward needs D % 256 == 0; most such cases respect it and
  // shrink within it (a legal D never shrinks into the error path), the rest exercise
  // the error. Weights per mille.
  D.draw = [](const DrawContext& ctx) {
    if (ctx.so_far.flag("initial_state"))
      return std::vector<IntOption>{IntOption::just(550, 32), IntOption::just(150, 64),
                                    IntOption::just(100, 96), IntOption::just(120, 128),
                                    IntOption::just(80, 256)};
    return std::vector<IntOption>{IntOption::just(773, 256), IntOption::just(135, 512),
                                  IntOption::just(55, 32),   IntOption::just(15, 64),
                                  IntOption::just(10, 96),   IntOption::just(12, 128)};
  };
  // Without h0, the narrowest D the device forward takes: a fuzzer's short input (its
  // missing choices the simplest) is then a case the kernel runs, not a refusal, and the
  // simplest case is where shrinking ends anyway (a legal D shrinks within 256's
  // multiples). With h0 the simplest stays 32.
  D.simplest_given = [](const Case& so_far) {
    return so_far.flag("initial_state") ? kChannelQuantum : kStatelessBlockChannels;
  };
  D.shrinks = [](int64_t x, const Case& c, size_t) {
    if (!c.flag("initial_state") && x % kStatelessBlockChannels == 0)
      return toward_quantum(x, kStatelessBlockChannels);
    if (x % kChannelQuantum == 0) return toward_quantum(x, kChannelQuantum);
    std::vector<int64_t> out;
    for (int64_t v = kChannelQuantum; v < x && out.size() < 4; v *= 2) out.push_back(v);
    if (x > 1) out.push_back(x - 1);
    return out;
  };

  ParamSpec cores = param_spec("num_cores", ParamType::integer,
                               "vector cores of the emulated device", int64_t{1});
  cores.default_value = int64_t{48};
  cores.static_bounds = {1, 4096};
  cores.draw = [](const DrawContext&) {
    std::vector<int64_t> powers_of_two;
    for (int64_t p = 1; p <= 64; p *= 2) powers_of_two.push_back(p);
    // 40% on the vector-core counts of real Ascend parts, 48 (the 910B2C) the most.
    return std::vector<IntOption>{
        IntOption::just(16, 48),         IntOption::just(6, 20),  IntOption::just(6, 24),
        IntOption::just(6, 30),          IntOption::just(6, 40),  IntOption::range(20, 1, 8),
        IntOption::any_of(15, powers_of_two), IntOption::range(25, 1, 64)};
  };

  ParamSpec activation =
      choice_param("activation", "none, or silu after the sum", {"none", "silu"}, {50, 50});

  ParamSpec bias = param_spec("bias", ParamType::flag, "a bias b [D]", false);
  bias.percent_true = 70;
  bias.default_value = true;
  ParamSpec dht = param_spec("final_state_grad", ParamType::flag,
                             "a cotangent dht for the final state", false);
  dht.percent_true = 50;

  s.params = {W, layout, lengths, splits, h0, D, cores, activation, bias, dht};
  s.size_check = size_problems;
  // Fewer and shorter segments first, then a smaller window, channels and cores, then
  // optional inputs off.
  s.shrink_order = {"lengths", "layout", "splits", "W", "D", "num_cores",
                    "initial_state", "bias", "final_state_grad", "activation"};

  s.derived = {
      {"length", "every sequence has this length", {"lengths"},
       [](Case& c, const std::string& text) {
         const auto L = parse_integer(text);
         if (!L) throw CaseError("parameter length: '" + text + "' is not an integer");
         c.set("lengths", std::vector<int64_t>(c.integers("lengths").size(), *L));
       },
       [](const Case& c) { return std::to_string(c.integers("lengths").back()); },
       ListEntries::all("lengths")},
      {"tail", "the last sequence's length", {"lengths"},
       [](Case& c, const std::string& text) {
         const auto L = parse_integer(text);
         if (!L) throw CaseError("parameter tail: '" + text + "' is not an integer");
         auto lengths = c.integers("lengths");
         lengths.back() = *L;
         c.set("lengths", lengths);
       },
       [](const Case& c) { return std::to_string(c.integers("lengths").back()); },
       ListEntries::last("lengths")},
  };
  return s;
}

}  // namespace

const Schema& schema() {
  static const Schema s = make_schema();
  return s;
}

}  // namespace kprop::causal_conv1d
