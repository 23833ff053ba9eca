// The causal_conv1d oracle (reference.cpp) against an independent one: libtorch autograd
// through a forward built from ATen ops (a depthwise conv1d over each sequence with its
// initial state prepended). Both run in float64, so they must agree to rounding.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/causal_conv1d/contract.h"
#include "kernels/causal_conv1d/implementations.h"

namespace kprop::causal_conv1d {
namespace {

// One call's shape and options. Dense cases use one length for every batch row.
struct Case {
  std::vector<int64_t> lengths;
  bool packed = true;
  int64_t D = 4, W = 4;
  bool bias = true, initial_state = true, dht = true;
  std::string activation = "silu";
  at::ScalarType cu_seqlens_dtype = at::kInt;
  uint64_t seed = 1;
};

std::string describe(const Case& c) {
  std::ostringstream out;
  out << (c.packed ? "packed" : "dense") << " lengths=[";
  for (size_t i = 0; i < c.lengths.size(); ++i) out << (i ? "," : "") << c.lengths[i];
  out << "] D=" << c.D << " W=" << c.W << " bias=" << c.bias << " h0=" << c.initial_state
      << " dht=" << c.dht << " activation=" << c.activation << " seed=" << c.seed;
  return out.str();
}

struct Inputs {
  Args args;
  at::Tensor dy, dht;  // dht undefined when the case has none
};

Inputs make_inputs(const Case& c) {
  auto generator = at::detail::createCPUGenerator(c.seed);
  auto randn = [&](at::IntArrayRef shape) { return at::randn(shape, generator, at::kDouble); };
  const int64_t N = static_cast<int64_t>(c.lengths.size());
  int64_t B = N, T = c.lengths.front();
  Inputs in;
  if (c.packed) {
    std::vector<int64_t> offsets{0};
    for (int64_t L : c.lengths) offsets.push_back(offsets.back() + L);
    B = 1;
    T = offsets.back();
    in.args.cu_seqlens = at::tensor(offsets, at::kLong).to(c.cu_seqlens_dtype);
  }
  in.args.x = randn({B, T, c.D});
  in.args.weight = randn({c.D, c.W});
  if (c.bias) in.args.bias = randn({c.D});
  if (c.initial_state) in.args.initial_state = randn({N, c.D, c.W});
  in.args.activation = c.activation;
  in.dy = randn({B, T, c.D});
  if (c.dht) in.dht = randn({N, c.D, c.W});
  return in;
}

struct OracleResult {
  ForwardResult forward;
  BackwardResult backward;
};

// The forward from ATen ops, differentiated by autograd. Per sequence, all W columns of
// h0 (or zeros) go in front of the rows, so padded position W + s holds xx[s]: the conv
// reads positions 1.. (h0 column 0 never), and final_state is the last W positions.
OracleResult autograd_oracle(const Inputs& in) {
  const Args& a = in.args;
  const int64_t D = a.weight.size(0), W = a.weight.size(1);
  auto leaf = [](const at::Tensor& t) {
    return t.defined() ? t.detach().clone().requires_grad_(true) : at::Tensor();
  };
  at::Tensor x = leaf(a.x), weight = leaf(a.weight), bias = leaf(a.bias),
             h0 = leaf(a.initial_state);

  std::vector<at::Tensor> y_pieces, finals;
  const std::vector<Sequence> seqs = sequences(a);
  for (size_t n = 0; n < seqs.size(); ++n) {
    const Sequence& seq = seqs[n];
    const int64_t L = seq.length;
    at::Tensor rows = x.select(0, seq.batch).narrow(0, seq.bos, L).t();  // [D, L]
    at::Tensor prefix = h0.defined() ? h0.select(0, n) : torch::zeros({D, W}, torch::kDouble);
    at::Tensor padded = torch::cat({prefix, rows}, 1);  // [D, W + L]
    const int64_t stride = 1, padding = 0, dilation = 1;
    at::Tensor pre =
        torch::conv1d(padded.narrow(1, 1, W - 1 + L).unsqueeze(0), weight.unsqueeze(1),
                      bias.defined() ? c10::optional<at::Tensor>(bias) : c10::nullopt,
                      at::IntArrayRef(stride), at::IntArrayRef(padding),
                      at::IntArrayRef(dilation), /*groups=*/D)
            .squeeze(0);  // [D, L]
    at::Tensor y = a.activation == "none" ? pre : torch::silu(pre);
    y_pieces.push_back(y.t());
    finals.push_back(padded.narrow(1, L, W));
  }
  at::Tensor y = a.cu_seqlens.defined() ? torch::cat(y_pieces, 0).unsqueeze(0)
                                        : torch::stack(y_pieces, 0);
  at::Tensor final_state = torch::stack(finals, 0);

  std::vector<at::Tensor> outputs{y}, cotangents{in.dy};
  if (in.dht.defined()) {
    outputs.push_back(final_state);
    cotangents.push_back(in.dht);
  }
  std::vector<at::Tensor> inputs{x, weight};
  if (bias.defined()) inputs.push_back(bias);
  if (h0.defined()) inputs.push_back(h0);
  std::vector<at::Tensor> grads = torch::autograd::grad(
      outputs, inputs, cotangents, /*retain_graph=*/c10::nullopt, /*create_graph=*/false,
      /*allow_unused=*/true);
  // An input autograd never reached (h0 when W = 1) has a zero gradient.
  for (size_t i = 0; i < grads.size(); ++i)
    if (!grads[i].defined()) grads[i] = torch::zeros_like(inputs[i]);

  OracleResult r;
  r.forward = {y.detach(), final_state.detach()};
  r.backward.dx = grads[0];
  r.backward.dweight = grads[1];
  size_t next = 2;
  if (bias.defined()) r.backward.dbias = grads[next++];
  if (h0.defined()) r.backward.dinitial_state = grads[next++];
  return r;
}

// Agreement to float64 rounding, relative to the tensor's magnitude.
void expect_close(const char* name, const at::Tensor& actual, const at::Tensor& expected) {
  ASSERT_TRUE(actual.defined()) << name << " is undefined";
  EXPECT_EQ(actual.scalar_type(), at::kDouble) << name;
  ASSERT_EQ(actual.sizes(), expected.sizes()) << name;
  const double error = (actual - expected).abs().max().item<double>();
  const double scale = 1.0 + expected.abs().max().item<double>();
  EXPECT_LE(error, 1e-10 * scale) << name << ": max abs error " << error;
}

void expect_matches(const ForwardResult& fwd, const BackwardResult& bwd,
                    const OracleResult& oracle) {
  expect_close("y", fwd.y, oracle.forward.y);
  expect_close("final_state", fwd.final_state, oracle.forward.final_state);
  expect_close("dx", bwd.dx, oracle.backward.dx);
  expect_close("dweight", bwd.dweight, oracle.backward.dweight);
  EXPECT_EQ(bwd.dbias.defined(), oracle.backward.dbias.defined()) << "dbias presence";
  if (oracle.backward.dbias.defined()) expect_close("dbias", bwd.dbias, oracle.backward.dbias);
  EXPECT_EQ(bwd.dinitial_state.defined(), oracle.backward.dinitial_state.defined())
      << "dinitial_state presence";
  if (oracle.backward.dinitial_state.defined())
    expect_close("dinitial_state", bwd.dinitial_state, oracle.backward.dinitial_state);
}

void expect_reference_matches_autograd(const Case& c) {
  SCOPED_TRACE(describe(c));
  const Inputs in = make_inputs(c);
  expect_matches(reference_forward(in.args), reference_backward(in.args, in.dy, in.dht),
                 autograd_oracle(in));
}

Case packed(std::vector<int64_t> lengths, int64_t W) {
  Case c;
  c.lengths = std::move(lengths);
  c.W = W;
  return c;
}

TEST(ReferenceCausalConv1d, HandComputedSmallCase) {
  // D = 1, W = 2: pre[t] = b + w0 xx[t-1] + w1 xx[t], with xx[-1] = h0 column 1.
  Args a;
  a.x = at::tensor({1.0, 2.0, 3.0}, at::kDouble).reshape({1, 3, 1});
  a.weight = at::tensor({0.5, 2.0}, at::kDouble).reshape({1, 2});
  a.bias = at::tensor({1.0}, at::kDouble);
  a.initial_state = at::tensor({99.0, 10.0}, at::kDouble).reshape({1, 1, 2});
  const ForwardResult r = reference_forward(a);
  expect_close("y", r.y, at::tensor({8.0, 5.5, 8.0}, at::kDouble).reshape({1, 3, 1}));
  expect_close("final_state", r.final_state,
               at::tensor({2.0, 3.0}, at::kDouble).reshape({1, 1, 2}));
}

TEST(ReferenceCausalConv1d, SingleSequenceShorterThanWindow) {
  expect_reference_matches_autograd(packed({2}, 4));
  expect_reference_matches_autograd(packed({1}, 8));
}

TEST(ReferenceCausalConv1d, SingleSequenceOfLengthWindowMinusOne) {
  expect_reference_matches_autograd(packed({3}, 4));
}

TEST(ReferenceCausalConv1d, SingleSequenceOfLengthWindow) {
  expect_reference_matches_autograd(packed({4}, 4));
}

TEST(ReferenceCausalConv1d, PackedLengthsOneAndSeven) {
  Case c = packed({1, 7}, 4);
  c.D = 32;
  expect_reference_matches_autograd(c);
}

TEST(ReferenceCausalConv1d, DenseBatchOfThree) {
  Case c = packed({9, 9, 9}, 4);
  c.packed = false;
  expect_reference_matches_autograd(c);
  c.lengths = {2, 2, 2};  // every row shorter than W
  expect_reference_matches_autograd(c);
}

TEST(ReferenceCausalConv1d, EveryOptionCombination) {
  for (int mask = 0; mask < 16; ++mask) {
    Case c = packed({3, 1, 6}, 4);
    c.activation = (mask & 1) ? "silu" : "none";
    c.bias = mask & 2;
    c.initial_state = mask & 4;
    c.dht = mask & 8;
    c.seed = 100 + mask;
    expect_reference_matches_autograd(c);
  }
}

TEST(ReferenceCausalConv1d, WindowOne) {
  expect_reference_matches_autograd(packed({1, 5, 2}, 1));
}

TEST(ReferenceCausalConv1d, WindowEight) {
  expect_reference_matches_autograd(packed({3, 12, 8}, 8));
}

TEST(ReferenceCausalConv1d, SwishIsSilu) {
  Case silu = packed({5, 2}, 3);
  Case swish = silu;
  swish.activation = "swish";
  const Inputs a = make_inputs(silu), b = make_inputs(swish);
  EXPECT_TRUE(at::equal(reference_forward(a.args).y, reference_forward(b.args).y));
  expect_reference_matches_autograd(swish);
}

TEST(ReferenceCausalConv1d, GeneratedCasesMatchAutograd) {
  std::mt19937 rng(20240611);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  auto coin = [&] { return std::bernoulli_distribution(0.5)(rng); };
  const int64_t channel_counts[] = {1, 2, 3, 32};
  for (int i = 0; i < 300; ++i) {
    Case c;
    c.packed = coin();
    const int64_t N = uniform(1, 5);
    if (c.packed) {
      for (int64_t n = 0; n < N; ++n) c.lengths.push_back(uniform(1, 40));
    } else {
      c.lengths.assign(N, uniform(1, 40));
    }
    c.W = uniform(1, 8);
    c.D = channel_counts[uniform(0, 3)];
    c.bias = coin();
    c.initial_state = coin();
    c.dht = coin();
    c.activation = coin() ? "none" : (coin() ? "silu" : "swish");
    c.cu_seqlens_dtype = coin() ? at::kInt : at::kLong;
    c.seed = 1000 + i;
    expect_reference_matches_autograd(c);
    if (HasFailure()) return;  // one shrunk-by-hand case is enough to debug from
  }
}

TEST(ReferenceCausalConv1d, LowerPrecisionInputsComputeInFloat64) {
  const Case c = packed({3, 6}, 4);
  const Inputs in = make_inputs(c);
  Inputs narrow = in;
  narrow.args.x = in.args.x.to(at::kFloat);
  narrow.args.weight = in.args.weight.to(at::kFloat);
  narrow.args.bias = in.args.bias.to(at::kFloat);
  narrow.args.initial_state = in.args.initial_state.to(at::kFloat);
  narrow.dy = in.dy.to(at::kFloat);
  narrow.dht = in.dht.to(at::kFloat);
  // The oracle gets the same float32-rounded values, widened to float64 up front.
  Inputs widened = narrow;
  widened.args.x = narrow.args.x.to(at::kDouble);
  widened.args.weight = narrow.args.weight.to(at::kDouble);
  widened.args.bias = narrow.args.bias.to(at::kDouble);
  widened.args.initial_state = narrow.args.initial_state.to(at::kDouble);
  widened.dy = narrow.dy.to(at::kDouble);
  widened.dht = narrow.dht.to(at::kDouble);
  expect_matches(reference_forward(narrow.args),
                 reference_backward(narrow.args, narrow.dy, narrow.dht),
                 autograd_oracle(widened));
}

TEST(ReferenceCausalConv1d, RegisteredOperatorsMatchDirectCalls) {
  Case c = packed({1, 7, 3}, 4);
  const Inputs in = make_inputs(c);
  const ForwardResult direct_fwd = reference_forward(in.args);
  const BackwardResult direct_bwd = reference_backward(in.args, in.dy, in.dht);
  const ForwardResult fwd = call_forward("kprop_reference", in.args);
  const BackwardResult bwd = call_backward("kprop_reference", in.args, in.dy, in.dht);
  EXPECT_TRUE(at::equal(fwd.y, direct_fwd.y));
  EXPECT_TRUE(at::equal(fwd.final_state, direct_fwd.final_state));
  EXPECT_TRUE(at::equal(bwd.dx, direct_bwd.dx));
  EXPECT_TRUE(at::equal(bwd.dweight, direct_bwd.dweight));
  EXPECT_TRUE(at::equal(bwd.dbias, direct_bwd.dbias));
  EXPECT_TRUE(at::equal(bwd.dinitial_state, direct_bwd.dinitial_state));
  expect_matches(fwd, bwd, autograd_oracle(in));

  // Absent optionals come back as None through the dispatcher too.
  c.bias = false;
  c.initial_state = false;
  c.dht = false;
  const Inputs bare = make_inputs(c);
  const BackwardResult bare_bwd = call_backward("kprop_reference", bare.args, bare.dy, bare.dht);
  EXPECT_FALSE(bare_bwd.dbias.defined());
  EXPECT_FALSE(bare_bwd.dinitial_state.defined());
  expect_matches(call_forward("kprop_reference", bare.args), bare_bwd, autograd_oracle(bare));
}

// check_args's message for these arguments, or "" when it accepts them.
std::string rejection_message(const Args& args) {
  try {
    check_args(args);
  } catch (const c10::Error& e) {
    return e.msg();
  }
  return "";
}

Args packed_args(std::vector<int64_t> offsets, int64_t T) {
  Args a;
  a.x = at::zeros({1, T, 2}, at::kDouble);
  a.weight = at::zeros({2, 3}, at::kDouble);
  a.cu_seqlens = at::tensor(offsets, at::kLong).to(at::kInt);
  return a;
}

TEST(ReferenceCausalConv1dArgs, RejectsZeroLengthSegment) {
  const Args a = packed_args({0, 3, 3, 5}, 5);
  const std::string message = rejection_message(a);
  EXPECT_NE(message.find("cu_seqlens"), std::string::npos) << message;
  EXPECT_THROW(reference_forward(a), c10::Error);
}

TEST(ReferenceCausalConv1dArgs, RejectsCuSeqlensNotEndingAtT) {
  const std::string message = rejection_message(packed_args({0, 3}, 5));
  EXPECT_NE(message.find("cu_seqlens"), std::string::npos) << message;
}

TEST(ReferenceCausalConv1dArgs, RejectsMisshapenInitialState) {
  Args a = packed_args({0, 2, 5}, 5);
  a.initial_state = at::zeros({2, 2, 2}, at::kDouble);  // W - 1 columns instead of W
  std::string message = rejection_message(a);
  EXPECT_NE(message.find("initial_state"), std::string::npos) << message;
  a.initial_state = at::zeros({1, 2, 3}, at::kDouble);  // one row for two sequences
  message = rejection_message(a);
  EXPECT_NE(message.find("initial_state"), std::string::npos) << message;
  EXPECT_THROW(reference_backward(a, at::zeros({1, 5, 2}, at::kDouble), at::Tensor()),
               c10::Error);
}

TEST(ReferenceCausalConv1dArgs, AcceptsWellFormedPackedCall) {
  EXPECT_EQ(rejection_message(packed_args({0, 2, 5}, 5)), "");
}

}  // namespace
}  // namespace kprop::causal_conv1d
