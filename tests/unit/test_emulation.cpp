// The tiled emulations of VeOmni's Ascend causal_conv1d through the dispatcher:
//  - `tiled` (kprop's correct version) against the float64 reference, also where the
//    chunks are narrower than the window (BT < W) and for every storage dtype;
//  - the historical states (original / clamped / fixed) on the cases where their
//    defects show, asserted as facts of those states: these tests document the bugs and
//    must keep passing as long as the emulations stay faithful;
//  - what the emulated device memory checker reports;
//  - the errors the kernels raise.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "harness/model/kernel.h"
#include "harness/model/memcheck.h"
#include "harness/model/verdict.h"
#include "kernels/causal_conv1d/contract.h"
#include "kernels/causal_conv1d/shape.h"
#include "kernels/causal_conv1d/tiling.h"

namespace kprop::causal_conv1d {
namespace {

constexpr const char* kReference = "kprop_reference";
constexpr const char* kTiled = "kprop_tiled";
constexpr const char* kOriginal = "kprop_tiled_original";
constexpr const char* kClamped = "kprop_tiled_clamped";
constexpr const char* kFixed = "kprop_tiled_fixed";

// One call's shape and options. Dense cases use lengths[0] for every batch row.
struct CallSpec {
  std::vector<int64_t> lengths{16};
  bool packed = true;
  int64_t D = 32, W = 4, cores = 48;
  bool bias = true, h0 = true, dht = false;
  std::string activation = "none";
  at::ScalarType dtype = at::kDouble;
  uint64_t seed = 1;
};

std::string describe(const CallSpec& s) {
  std::ostringstream out;
  out << (s.packed ? "packed" : "dense") << " lengths=[";
  for (size_t i = 0; i < s.lengths.size(); ++i) out << (i ? "," : "") << s.lengths[i];
  out << "] D=" << s.D << " W=" << s.W << " cores=" << s.cores << " bias=" << s.bias
      << " h0=" << s.h0 << " dht=" << s.dht << " activation=" << s.activation
      << " dtype=" << c10::toString(s.dtype) << " seed=" << s.seed;
  return out.str();
}

struct Inputs {
  Args args;
  at::Tensor dy, dht;  // dht undefined without one
  int64_t rows = 0;    // B * T
};

// Inputs drawn in float64 from the seed and rounded to the setup's dtype.
Inputs make_inputs(const CallSpec& s) {
  auto generator = at::detail::createCPUGenerator(s.seed);
  auto randn = [&](at::IntArrayRef shape) {
    return at::randn(shape, generator, at::kDouble).to(s.dtype);
  };
  const int64_t N = static_cast<int64_t>(s.lengths.size());
  int64_t B = N, T = s.lengths.front();
  Inputs in;
  if (s.packed) {
    std::vector<int64_t> offsets{0};
    for (int64_t L : s.lengths) offsets.push_back(offsets.back() + L);
    B = 1;
    T = offsets.back();
    in.args.cu_seqlens = at::tensor(offsets, at::kLong).to(at::kInt);
  }
  in.rows = B * T;
  in.args.x = randn({B, T, s.D});
  in.args.weight = randn({s.D, s.W});
  if (s.bias) in.args.bias = randn({s.D});
  if (s.h0) in.args.initial_state = randn({N, s.D, s.W});
  in.args.activation = s.activation;
  in.args.num_cores = s.cores;
  in.dy = randn({B, T, s.D});
  if (s.dht) in.dht = randn({N, s.D, s.W});
  return in;
}

// The backward's BT for these inputs, as the unclamped kernels (tiled, original) use it.
int64_t backward_bt(const CallSpec& s, const Inputs& in) {
  return backward_tiles(in.rows, s.W, s.h0, s.cores, false).BT;
}

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
}

// |actual - expected| <= rtol * (|expected| + max|expected|) elementwise, plus a floor.
void expect_close(const std::string& name, const at::Tensor& actual, const at::Tensor& expected,
                  double rtol) {
  ASSERT_TRUE(actual.defined()) << name << " is undefined";
  ASSERT_TRUE(expected.defined()) << name << ": no expected value";
  ASSERT_EQ(actual.sizes(), expected.sizes()) << name;
  const auto a = actual.to(at::kDouble), e = expected.to(at::kDouble);
  const double scale = e.abs().max().item<double>();
  const auto excess = (a - e).abs() - rtol * (e.abs() + scale) - 1e-300;
  const double worst = excess.max().item<double>();
  EXPECT_TRUE(worst <= 0 && !std::isnan(worst))
      << name << ": max abs error " << max_abs_diff(a, e) << " exceeds rtol " << rtol
      << " (scale " << scale << ")";
}

void expect_forward_close(const ForwardResult& actual, const ForwardResult& expected,
                          double rtol) {
  expect_close("y", actual.y, expected.y, rtol);
  expect_close("final_state", actual.final_state, expected.final_state, rtol);
}

void expect_backward_close(const BackwardResult& actual, const BackwardResult& expected,
                           double rtol) {
  expect_close("dx", actual.dx, expected.dx, rtol);
  expect_close("dweight", actual.dweight, expected.dweight, rtol);
  EXPECT_EQ(actual.dbias.defined(), expected.dbias.defined()) << "dbias presence";
  if (expected.dbias.defined()) expect_close("dbias", actual.dbias, expected.dbias, rtol);
  EXPECT_EQ(actual.dinitial_state.defined(), expected.dinitial_state.defined())
      << "dinitial_state presence";
  if (expected.dinitial_state.defined())
    expect_close("dinitial_state", actual.dinitial_state, expected.dinitial_state, rtol);
}

// `tiled` forward and backward against the reference, in float64, within their derived
// bounds (defined below).
void expect_within_derived_bounds(const CallSpec& s, const Inputs& in, const ForwardResult& f,
                                  const BackwardResult& b, const ForwardResult& rf,
                                  const BackwardResult& rb);
void expect_tiled_matches_reference(const CallSpec& s) {
  SCOPED_TRACE(describe(s));
  const Inputs in = make_inputs(s);
  expect_within_derived_bounds(s, in, call_forward(kTiled, in.args),
                               call_backward(kTiled, in.args, in.dy, in.dht),
                               call_forward(kReference, in.args),
                               call_backward(kReference, in.args, in.dy, in.dht));
}

// ---- tiled vs reference, float64 ---------------------------------------------------

TEST(EmulationTest, TiledPackedOneAndSevenWithNarrowChunks) {
  // 8 rows on 48 cores: BT = 1 < W = 4, so every chunk of the first W rows is a head chunk.
  CallSpec s;
  s.lengths = {1, 7};
  s.W = 4;
  s.cores = 48;
  ASSERT_EQ(backward_bt(s, make_inputs(s)), 1);
  for (int mask = 0; mask < 8; ++mask) {
    s.activation = (mask & 1) ? "silu" : "none";
    s.dht = mask & 2;
    s.bias = mask & 4;
    s.seed = 10 + mask;
    expect_tiled_matches_reference(s);
  }
}

TEST(EmulationTest, TiledBtOfTwoBelowWindow) {
  // 90 rows on 48 cores: cdiv(90, 48) = 2, so BT = 2 < W.
  CallSpec s;
  s.lengths = {3, 40, 2, 45};
  s.W = 4;
  s.cores = 48;
  ASSERT_EQ(backward_bt(s, make_inputs(s)), 2);
  for (bool silu : {false, true})
    for (bool dht : {false, true}) {
      s.activation = silu ? "silu" : "none";
      s.dht = dht;
      expect_tiled_matches_reference(s);
    }
  s.W = 7;  // window wider than three chunks
  s.dht = true;
  expect_tiled_matches_reference(s);
}

TEST(EmulationTest, TiledDenseBatchOfTwo) {
  CallSpec s;
  s.packed = false;
  s.lengths = {5, 5};
  s.W = 4;
  s.cores = 48;
  ASSERT_EQ(backward_bt(s, make_inputs(s)), 1);
  for (int mask = 0; mask < 4; ++mask) {
    s.activation = (mask & 1) ? "silu" : "none";
    s.dht = mask & 2;
    s.seed = 30 + mask;
    expect_tiled_matches_reference(s);
  }
  s.lengths = {20, 20};  // 40 rows on 4 cores: BT = 8 > W
  s.cores = 4;
  s.dht = true;
  ASSERT_EQ(backward_bt(s, make_inputs(s)), 8);
  expect_tiled_matches_reference(s);
}

TEST(EmulationTest, TiledSequenceShorterThanWindowPassesDhtIntoDh0) {
  // A sequence of length 2 < W = 4 with h0 and dht: final_state columns 0..1 are h0
  // columns 2..3, so dht columns 0..1 must reach dh0 columns 2..3.
  CallSpec s;
  s.lengths = {2};
  s.W = 4;
  s.h0 = true;
  s.dht = true;
  for (bool packed : {true, false})
    for (bool silu : {false, true}) {
      s.packed = packed;
      s.activation = silu ? "silu" : "none";
      expect_tiled_matches_reference(s);
    }
  // The pass-through is really there: dh0 with dht minus dh0 without it.
  const Inputs in = make_inputs(s);
  const auto with = call_backward(kTiled, in.args, in.dy, in.dht).dinitial_state;
  const auto without = call_backward(kTiled, in.args, in.dy, at::Tensor()).dinitial_state;
  const auto delta = with - without;
  EXPECT_LE(max_abs_diff(delta.narrow(2, 2, 2), in.dht.narrow(2, 0, 2)), 1e-12);
  EXPECT_LE(delta.narrow(2, 0, 2).abs().max().item<double>(), 1e-12);

  // Packed, a short sequence between longer ones, and one of length 1.
  s.packed = true;
  s.lengths = {6, 2, 1, 5};
  s.activation = "silu";
  expect_tiled_matches_reference(s);
  s.dht = false;
  expect_tiled_matches_reference(s);
}

TEST(EmulationTest, TiledWithoutInitialState) {
  // The forward without a state uses BD = 256, so D = 256.
  CallSpec s;
  s.D = 256;
  s.h0 = false;
  s.lengths = {1, 7, 3};
  for (bool silu : {false, true})
    for (bool dht : {false, true}) {
      s.activation = silu ? "silu" : "none";
      s.dht = dht;
      expect_tiled_matches_reference(s);
    }
}

TEST(EmulationTest, TiledWindowsOneToEightAndManyCoreCounts) {
  std::mt19937 rng(7);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const int64_t cores[] = {1, 2, 8, 16, 20, 24, 30, 40, 48, 64};
  for (int i = 0; i < 40; ++i) {
    CallSpec s;
    s.packed = uniform(0, 3) != 0;
    const int64_t N = uniform(1, 4);
    s.lengths.clear();
    if (s.packed) {
      for (int64_t n = 0; n < N; ++n) s.lengths.push_back(uniform(1, 20));
    } else {
      s.lengths.assign(N, uniform(1, 20));
    }
    s.W = uniform(1, 8);
    s.cores = cores[uniform(0, 9)];
    s.bias = uniform(0, 1);
    s.h0 = true;
    s.dht = uniform(0, 1);
    s.activation = uniform(0, 1) ? "silu" : "none";
    s.seed = 500 + i;
    expect_tiled_matches_reference(s);
    if (HasFailure()) return;
  }
}

// ---- tiled in float32 / bfloat16 ---------------------------------------------------

void expect_dtype(const char* name, const at::Tensor& t, at::ScalarType dtype) {
  ASSERT_TRUE(t.defined()) << name;
  EXPECT_EQ(t.scalar_type(), dtype) << name;
}

// Every output and gradient of `tiled` within the bound kprop derives for it
// (Kernel::error_bounds, docs/design.md §5) of the float64 reference on the same
// (rounded) inputs: the harness's own judgement, no hand-picked tolerance.
void expect_within_derived_bounds(const CallSpec& s, const Inputs& in, const ForwardResult& f,
                                  const BackwardResult& b, const ForwardResult& rf,
                                  const BackwardResult& rb) {
  const Kernel& kernel = find_kernel("causal_conv1d");
  Shape shape;
  shape.layout = s.packed ? Layout::packed : Layout::dense;
  shape.lengths = s.lengths;
  shape.D = s.D;
  shape.W = s.W;
  shape.num_cores = s.cores;
  shape.activation = s.activation == "silu" ? Activation::silu : Activation::none;
  shape.has_bias = s.bias;
  shape.has_initial_state = s.h0;
  shape.has_final_state_grad = s.dht;
  Case c;
  c.kernel = "causal_conv1d";
  c.dtype = s.dtype == at::kBFloat16 ? DType::bfloat16
            : s.dtype == at::kHalf   ? DType::float16
            : s.dtype == at::kFloat  ? DType::float32
                                     : DType::float64;
  Problem p{with_shape(c, shape), {}};
  p.inputs.set("x", in.args.x);
  p.inputs.set("w", in.args.weight);
  p.inputs.set("b", in.args.bias);
  p.inputs.set("h0", in.args.initial_state);
  p.inputs.set("cu_seqlens", in.args.cu_seqlens);
  NamedTensors cot, reference, actual;
  cot.set("dy", in.dy);
  cot.set("dht", in.dht);
  reference.set("y", rf.y);
  reference.set("ht", rf.final_state);
  reference.set("dx", rb.dx);
  reference.set("dw", rb.dweight);
  reference.set("db", rb.dbias);
  reference.set("dh0", rb.dinitial_state);
  actual.set("y", f.y);
  actual.set("ht", f.final_state);
  actual.set("dx", b.dx);
  actual.set("dw", b.dweight);
  actual.set("db", b.dbias);
  actual.set("dh0", b.dinitial_state);
  const auto bounds = kernel.error_bounds(p, cot, reference, /*joined_partials=*/{0});
  for (const auto& row : compare(kernel, p, actual, reference, bounds))
    EXPECT_TRUE(row.passed()) << row.tensor << ": error " << row.max_abs << " is "
                              << row.error_over_bound << " times its derived bound";
}

// Outputs in the input dtype, each within its derived bound of the float64 reference.
void expect_low_precision(const CallSpec& s) {
  SCOPED_TRACE(describe(s));
  const Inputs in = make_inputs(s);
  const ForwardResult f = call_forward(kTiled, in.args);
  const BackwardResult b = call_backward(kTiled, in.args, in.dy, in.dht);
  expect_dtype("y", f.y, s.dtype);
  expect_dtype("final_state", f.final_state, s.dtype);
  expect_dtype("dx", b.dx, s.dtype);
  expect_dtype("dweight", b.dweight, s.dtype);
  if (s.bias) expect_dtype("dbias", b.dbias, s.dtype);
  if (s.h0) expect_dtype("dinitial_state", b.dinitial_state, s.dtype);
  const ForwardResult rf = call_forward(kReference, in.args);
  const BackwardResult rb = call_backward(kReference, in.args, in.dy, in.dht);
  EXPECT_EQ(rf.y.scalar_type(), at::kDouble);
  // final_state is a copy of inputs: exact in any dtype.
  EXPECT_TRUE(at::equal(f.final_state.to(at::kDouble), rf.final_state));

  expect_within_derived_bounds(s, in, f, b, rf, rb);
}

// Packed with and without silu, then a dense batch on one core; returns the last spec.
CallSpec expect_low_precision_over_shapes(at::ScalarType dtype) {
  CallSpec s;
  s.dtype = dtype;
  s.lengths = {1, 7, 12, 3};
  s.dht = true;
  for (bool silu : {false, true}) {
    s.activation = silu ? "silu" : "none";
    expect_low_precision(s);
  }
  s.packed = false;
  s.lengths = {9, 9};
  s.cores = 1;
  expect_low_precision(s);
  return s;
}

TEST(EmulationTest, TiledFloat32IsCloseToReference) {
  expect_low_precision_over_shapes(at::kFloat);
}

TEST(EmulationTest, TiledBfloat16IsCloseToReference) {
  const CallSpec s = expect_low_precision_over_shapes(at::kBFloat16);
  // And it is really rounded to bfloat16: not as close as float32 would be.
  const Inputs in = make_inputs(s);
  const double err = max_abs_diff(call_forward(kTiled, in.args).y,
                                  call_forward(kReference, in.args).y);
  EXPECT_GT(err, 1e-5);
}

// ---- historical states: the defects, as facts ---------------------------------------

TEST(EmulationTest, OriginalOverCountsDh0WhenBtBelowWindow) {
  // One sequence of length 2, W = 2, 16 cores: BT = 1, so both chunks are head chunks
  // and each writes dh0 slot i_t with column 1 = g[i_t] * w[:, 0] (counted from the
  // chunk's own first row). The host sums the slots: (g0 + g1) * w0, truth g0 * w0.
  for (bool packed : {true, false}) {
    CallSpec s;
    s.packed = packed;
    s.lengths = {2};
    s.W = 2;
    s.cores = 16;
    s.h0 = true;
    s.seed = 3;
    SCOPED_TRACE(describe(s));
    const Inputs in = make_inputs(s);
    ASSERT_EQ(backward_bt(s, in), 1);
    const auto original = call_backward(kOriginal, in.args, in.dy, at::Tensor());
    const auto reference = call_backward(kReference, in.args, in.dy, at::Tensor());
    const auto w0 = in.args.weight.select(1, 0);  // [D]
    const auto g0 = in.dy[0][0], g1 = in.dy[0][1];
    const auto dh0 = original.dinitial_state[0];  // [D, W]
    EXPECT_LE(max_abs_diff(dh0.select(1, 1), (g0 + g1) * w0), 1e-12);
    EXPECT_EQ(dh0.select(1, 0).abs().max().item<double>(), 0.0);
    // The reference says g0 * w0, and the two differ by g1 * w0.
    EXPECT_LE(max_abs_diff(reference.dinitial_state[0].select(1, 1), g0 * w0), 1e-12);
    EXPECT_GT(max_abs_diff(original.dinitial_state, reference.dinitial_state), 1e-3);
    // Everything else of this case is right.
    expect_close("dx", original.dx, reference.dx, 1e-12);
    expect_close("dweight", original.dweight, reference.dweight, 1e-12);
    expect_close("dbias", original.dbias, reference.dbias, 1e-12);
  }
}

TEST(EmulationTest, ClampedLeaksNextSequenceIntoDwAndDh0WhileFixedIsRight) {
  // Packed [1, 7], W = 4, 48 cores, h0: the clamp makes BT = 4, taller than the first
  // segment, and mask_head_rows = o_t < i_w admits rows 1, 2 — of the second sequence.
  CallSpec s;
  s.lengths = {1, 7};
  s.W = 4;
  s.cores = 48;
  s.h0 = true;
  s.seed = 4;
  const Inputs in = make_inputs(s);
  ASSERT_EQ(backward_tiles(in.rows, s.W, true, s.cores, true).BT, 4);
  const auto reference = call_backward(kReference, in.args, in.dy, at::Tensor());
  const auto clamped = call_backward(kClamped, in.args, in.dy, at::Tensor());
  const auto fixed = call_backward(kFixed, in.args, in.dy, at::Tensor());

  EXPECT_GT(max_abs_diff(clamped.dweight, reference.dweight), 1e-3);
  EXPECT_GT(max_abs_diff(clamped.dinitial_state[0], reference.dinitial_state[0]), 1e-3);
  // Only the short sequence's dh0 is wrong; dx and dbias never read the head rows.
  expect_close("dh0 of sequence 1", clamped.dinitial_state[1], reference.dinitial_state[1],
               1e-12);
  expect_close("dx", clamped.dx, reference.dx, 1e-12);
  expect_close("dbias", clamped.dbias, reference.dbias, 1e-12);

  expect_backward_close(fixed, reference, 1e-12);
  // The forward of this case is right in every state.
  expect_forward_close(call_forward(kClamped, in.args), call_forward(kReference, in.args),
                       1e-12);
}

TEST(EmulationTest, FixedDropsDhtPassThroughForShortSequence) {
  // One sequence of length 1 < W = 2 with h0 and dht: final_state column 0 is h0
  // column 1, so dh0 column 1 should include dht column 0; `fixed` leaves it out.
  for (bool packed : {true, false}) {
    CallSpec s;
    s.packed = packed;
    s.lengths = {1};
    s.W = 2;
    s.h0 = true;
    s.dht = true;
    s.seed = 5;
    SCOPED_TRACE(describe(s));
    const Inputs in = make_inputs(s);
    const auto reference = call_backward(kReference, in.args, in.dy, in.dht);
    const auto fixed = call_backward(kFixed, in.args, in.dy, in.dht);
    const auto expected_col1 =
        reference.dinitial_state.select(2, 1) - in.dht.select(2, 0);  // [N, D]
    EXPECT_LE(max_abs_diff(fixed.dinitial_state.select(2, 1), expected_col1), 1e-12);
    EXPECT_GT(max_abs_diff(fixed.dinitial_state, reference.dinitial_state), 1e-3);
    expect_close("dx", fixed.dx, reference.dx, 1e-12);
    expect_close("dweight", fixed.dweight, reference.dweight, 1e-12);
    // Without dht, the same case is right.
    expect_backward_close(call_backward(kFixed, in.args, in.dy, at::Tensor()),
                          call_backward(kReference, in.args, in.dy, at::Tensor()), 1e-12);
    // And `tiled` passes dht through.
    expect_backward_close(call_backward(kTiled, in.args, in.dy, in.dht), reference, 1e-12);
  }
}

// (The historical states register the tiled forward itself, so comparing their forward
// with it could not fail: no test does.)

// ---- memory checker ------------------------------------------------------------------

bool has_finding(const std::vector<MemoryFinding>& findings, MemoryFinding::Kind kind,
                 const std::string& tensor) {
  return std::any_of(findings.begin(), findings.end(), [&](const MemoryFinding& f) {
    return f.kind == kind && f.tensor == tensor;
  });
}

std::string describe_all(const std::vector<MemoryFinding>& findings) {
  std::string out;
  for (const auto& f : findings) out += describe(f) + "; ";
  return out.empty() ? "(none)" : out;
}

std::vector<MemoryFinding> backward_findings(const char* ns, const Inputs& in) {
  MemcheckLog::clear();
  call_backward(ns, in.args, in.dy, in.dht);
  return MemcheckLog::take();
}

TEST(EmulationTest, MemcheckClampedReadsPastEndOfDy) {
  // One sequence of length 1, W = 4, h0: BT = 4, and the head rows 1 and 2 it admits
  // lie past the end of dy.
  CallSpec s;
  s.lengths = {1};
  s.W = 4;
  s.h0 = true;
  const Inputs in = make_inputs(s);
  const auto clamped = backward_findings(kClamped, in);
  EXPECT_TRUE(has_finding(clamped, MemoryFinding::Kind::out_of_bounds_load, "dy"))
      << describe_all(clamped);
  const auto tiled = backward_findings(kTiled, in);
  EXPECT_TRUE(tiled.empty()) << describe_all(tiled);
  // take() clears the log.
  EXPECT_TRUE(MemcheckLog::take().empty());
}

TEST(EmulationTest, MemcheckOriginalSlotsOfPackedSequencesCollide) {
  // Packed [3, 1], W = 3, 16 cores, h0: BT = 1; dh0 slot i_t * B + n with B = 1 puts
  // chunk 1 of sequence 0 and chunk 0 of sequence 1 in the same slot.
  CallSpec s;
  s.lengths = {3, 1};
  s.W = 3;
  s.cores = 16;
  s.h0 = true;
  const Inputs in = make_inputs(s);
  ASSERT_EQ(backward_bt(s, in), 1);
  const auto original = backward_findings(kOriginal, in);
  EXPECT_TRUE(has_finding(original, MemoryFinding::Kind::write_conflict, "dh0"))
      << describe_all(original);
  const auto tiled = backward_findings(kTiled, in);
  EXPECT_TRUE(tiled.empty()) << describe_all(tiled);
  // tiled's answer is also right there.
  expect_backward_close(call_backward(kTiled, in.args, in.dy, in.dht),
                        call_backward(kReference, in.args, in.dy, in.dht), 1e-12);
}

TEST(EmulationTest, MemcheckSilentOnCorrectRuns) {
  CallSpec s;
  s.lengths = {1, 7, 2, 1};
  s.dht = true;
  s.activation = "silu";
  for (int64_t W : {1, 2, 4, 8})
    for (int64_t cores : {1, 16, 48}) {
      s.W = W;
      s.cores = cores;
      SCOPED_TRACE(describe(s));
      const Inputs in = make_inputs(s);
      const auto findings = backward_findings(kTiled, in);
      EXPECT_TRUE(findings.empty()) << describe_all(findings);
      MemcheckLog::clear();
      call_forward(kTiled, in.args);
      const auto fwd = MemcheckLog::take();
      EXPECT_TRUE(fwd.empty()) << describe_all(fwd);
    }
}

// ---- errors ----------------------------------------------------------------------------

template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const c10::Error& e) {
    return e.what();
  }
  return "";
}

TEST(EmulationTest, ClampedRefusesWindowAboveEight) {
  CallSpec s;
  s.lengths = {5, 12};
  s.W = 9;
  const Inputs in = make_inputs(s);
  for (const char* ns : {kClamped, kFixed}) {
    const std::string message =
        error_of([&] { call_backward(ns, in.args, in.dy, in.dht); });
    EXPECT_NE(message.find("W > 8"), std::string::npos) << ns << ": " << message;
  }
  // The unclamped kernels take W = 9.
  EXPECT_EQ(error_of([&] { call_backward(kTiled, in.args, in.dy, in.dht); }), "");
  EXPECT_EQ(error_of([&] { call_backward(kOriginal, in.args, in.dy, in.dht); }), "");
}

TEST(EmulationTest, ForwardWithoutStateNeedsChannelsDivisibleBy256) {
  CallSpec s;
  s.h0 = false;
  s.D = 32;
  const Inputs in = make_inputs(s);
  for (const char* ns : {kTiled, kOriginal, kClamped, kFixed}) {
    const std::string message = error_of([&] { call_forward(ns, in.args); });
    EXPECT_NE(message.find("D must be divisible by BD"), std::string::npos)
        << ns << ": " << message;
  }
  // The backward (BD = 32) and the reference take it.
  EXPECT_EQ(error_of([&] { call_backward(kTiled, in.args, in.dy, in.dht); }), "");
  EXPECT_EQ(error_of([&] { call_forward(kReference, in.args); }), "");
  // With a state BD = 32 and D = 48 is refused by both kernels.
  CallSpec t;
  t.D = 48;
  const Inputs in48 = make_inputs(t);
  EXPECT_NE(error_of([&] { call_forward(kTiled, in48.args); }).find("D must be divisible by BD"),
            std::string::npos);
  EXPECT_NE(error_of([&] { call_backward(kTiled, in48.args, in48.dy, in48.dht); })
                .find("D must be divisible by BD"),
            std::string::npos);
}

TEST(EmulationTest, ZeroLengthSegmentIsAnInputError) {
  CallSpec s;
  s.lengths = {2, 3};
  Inputs in = make_inputs(s);
  in.args.cu_seqlens = at::tensor({0, 2, 2, 5}, at::kInt);
  in.args.initial_state = at::randn({3, s.D, s.W}, at::kDouble);
  for (const char* ns : {kTiled, kOriginal, kClamped, kFixed}) {
    const std::string fwd = error_of([&] { call_forward(ns, in.args); });
    EXPECT_NE(fwd.find("cu_seqlens"), std::string::npos) << ns << ": " << fwd;
    const std::string bwd = error_of([&] { call_backward(ns, in.args, in.dy, at::Tensor()); });
    EXPECT_NE(bwd.find("cu_seqlens"), std::string::npos) << ns << ": " << bwd;
  }
}

}  // namespace
}  // namespace kprop::causal_conv1d
