// The kernel spec (harness/spec/kernel_spec.h): what it derives, checked against what the
// derivation must give, so that each goes red when its mechanism breaks — a wrong derived
// bound, a gradient mapped to the wrong input, a missing optional input — and bad
// declarations, each a usage error naming the kernel and the field.
#include <gtest/gtest.h>

#include <cmath>

#include "core/errors.h"
#include "harness/engine/property.h"
#include "harness/execution/dispatch.h"
#include "harness/execution/takes.h"
#include "harness/model/random_tensor.h"
#include "harness/model/tolerance.h"
#include "harness/spec/kernel_spec.h"
#include "harness/spec/operator_signature.h"

namespace kprop {
namespace {

// A one-dimensional probe: y = x * s, z = sum(x) over n; never registered.
KernelSpec probe() {
  KernelSpec k;
  k.name = "spec_probe";
  k.params = {param_spec("n", ParamType::integer, "elements", int64_t{1}).within(1, 64),
              param_spec("with_s", ParamType::flag, "a scale s", false)};
  k.dims = {param_dim("n")};
  k.inputs = {{"x", {"n"}}, TensorSpec("s", {"n"}).when_flag("with_s")};
  k.outputs = {{"y", {"n"}}};
  k.reference = [](const OpArgs& a) { return NamedTensors{{"y", a["x"] * 2}}; };
  k.bounds = {{"y", Bound::elementwise(3)}, {"dx", Bound::sum_over("n", {})},
              {"ds", Bound::elementwise(1)}};
  k.default_implementation = "reference";
  return k;
}

Case probe_case(int64_t n, bool with_s, DType dtype = DType::float32) {
  Case c;
  c.kernel = "spec_probe";
  c.impl = "reference";
  c.dtype = dtype;
  c.seed = 7;
  c.set("n", n);
  c.set("with_s", with_s);
  return c;
}

std::string usage_error(KernelSpec k) {
  try {
    compile_spec(std::move(k));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(KernelSpec, DerivedElementwiseBoundIsTheRoundingModel) {
  const auto kernel = compile_spec(probe());
  const Problem p = kernel->materialize(probe_case(5, false));
  const at::Tensor y = at::tensor({1.0, -2.0, 0.5, 0.0, 3.0}, at::kDouble);
  const double u = unit_roundoff(at::kFloat), tiny = smallest_normal(at::kFloat);
  for (const std::vector<int>& joined : {std::vector<int>{0}, std::vector<int>{0, 1}}) {
    const NamedTensors b = kernel->error_bounds(p, {}, NamedTensors{{"y", y}}, joined);
    for (int64_t i = 0; i < 5; ++i) {
      const double v = std::abs(y[i].item<double>());
      double expected = 0;
      for (int j : joined) expected += (gamma_bound(3, u) * (1 + u) + j * u) * v + u * v + tiny;
      EXPECT_DOUBLE_EQ(b.get("y")[i].item<double>(), expected) << "joined " << joined.size();
    }
  }
}

TEST(KernelSpec, DerivedSumBoundTakesKFromTheNamedDimension) {
  const auto kernel = compile_spec(probe());
  const Problem p = kernel->materialize(probe_case(6, false));
  const at::Tensor dx = at::full({6}, 2.0, at::kDouble);
  const NamedTensors b = kernel->error_bounds(p, {}, NamedTensors{{"dx", dx}}, {0});
  const at::Tensor expected = sum_error_bound(dx.abs(), dx, 6, at::kFloat, at::kFloat, 0);
  EXPECT_TRUE(at::equal(b.get("dx"), expected));
}

TEST(KernelSpec, ReturnsMapToGradientsByNameNotByPosition) {
  KernelSpec k = probe();
  k.backward_schema = "spec_probe_bwd(Tensor x, Tensor? s, Tensor dy) -> (Tensor ds, Tensor dx)";
  k.forward_schema = "spec_probe_fwd(Tensor x, Tensor? s) -> (Tensor y)";
  const OperatorSignature bwd(k, k.backward_schema, true);
  EXPECT_EQ(bwd.returns(), (std::vector<std::string>{"ds", "dx"}));
  torch::jit::Stack stack{at::ones({1}), at::zeros({1})};
  const NamedTensors r = bwd.results(stack);
  EXPECT_EQ(r.get("ds").item<float>(), 1.0f);
  EXPECT_EQ(r.get("dx").item<float>(), 0.0f);
  // Schema names in either spelling: causal_conv1d's dweight is dw, its dht a cotangent.
  const KernelSpec& conv = find_kernel("causal_conv1d").declaration();
  const OperatorSignature conv_bwd(conv, conv.backward_schema, true);
  EXPECT_EQ(conv_bwd.returns(), (std::vector<std::string>{"dx", "dw", "db", "dh0"}));
  std::vector<std::string> cotangents;
  for (const auto& a : conv_bwd.arguments())
    if (a.role == OperatorSignature::Role::cotangent) cotangents.push_back(a.name);
  EXPECT_EQ(cotangents, (std::vector<std::string>{"dy", "dht"}));
}

TEST(KernelSpec, AMissingOptionalInputIsNoneAndHasNoGradient) {
  const Kernel& tanh = find_kernel("scaled_tanh");
  Case c = probe_case(1, false);
  c.kernel = "scaled_tanh";
  c.impl = "toy";
  c.params = {{"rows", int64_t{2}}, {"cols", int64_t{9}}, {"bias", false}};
  const Problem p = tanh.materialize(c);
  EXPECT_FALSE(p.inputs.get("b").defined());
  EXPECT_EQ(tanh.differentiable_inputs(p), (std::vector<std::string>{"x", "s"}));
  const KernelSpec& spec = tanh.declaration();
  const auto stack = OperatorSignature(spec, spec.forward_schema, false).stack_for(p, {});
  ASSERT_EQ(stack.size(), 3u);
  EXPECT_TRUE(stack[2].isNone());
  const NamedTensors y = tanh.forward("kprop_toy", p);
  const NamedTensors g = tanh.backward("kprop_toy", p, NamedTensors{{"dy", at::ones_like(y.get("y"))}});
  EXPECT_TRUE(g.has("dx") && g.has("ds"));
  EXPECT_FALSE(g.has("db"));
  c.set("bias", true);
  const Problem with_bias = tanh.materialize(c);
  EXPECT_EQ(with_bias.inputs.get("b").sizes(), (std::vector<int64_t>{9}));
  EXPECT_TRUE(tanh.backward("kprop_toy", with_bias, NamedTensors{{"dy", at::ones({2, 9})}}).has("db"));
}

// A scaled_tanh case with a bias, of `rows` x `cols`, through its reference.
Case tanh_case(DType dtype, uint64_t seed, int64_t rows, int64_t cols) {
  Case c;
  c.kernel = "scaled_tanh";
  c.impl = "reference";
  c.dtype = dtype;
  c.seed = seed;
  c.params = {{"rows", rows}, {"cols", cols}, {"bias", true}};
  return c;
}

TEST(KernelSpec, TheReferenceBackwardIsAutogradOfItsForward) {
  const Kernel& tanh = find_kernel("scaled_tanh");
  const Case c = tanh_case(DType::float64, 3, 3, 5);
  const Problem p = tanh.materialize(c);
  const at::Tensor dy = random_tensor({3, 5}, Distribution::normal, 3, 100, DType::float64);
  const NamedTensors g = tanh.backward("kprop_reference", p, NamedTensors{{"dy", dy}});
  const at::Tensor x = p.inputs.get("x"), s = p.inputs.get("s"), t = x.tanh();
  EXPECT_TRUE(at::allclose(g.get("dx"), dy * s * (1 - t * t), 1e-14, 1e-14));
  EXPECT_TRUE(at::allclose(g.get("ds"), dy * t, 1e-14, 1e-14));
  EXPECT_TRUE(at::allclose(g.get("db"), dy.sum(0), 1e-14, 1e-14));
}

// The reference called in a dtype below float64 (as the implementation under test) answers
// the float64 answer, and the same on a strided view: exact, within every derived bound. Run
// in bf16 its ATen steps would each round (the first nightly over the library: 46 failures
// of `reference`).
TEST(KernelSpec, TheReferenceAsAnImplementationAnswersInFloat64) {
  const Kernel& tanh = find_kernel("scaled_tanh");
  const Case c = tanh_case(DType::bfloat16, 11, 4, 33);
  const Problem p = tanh.materialize(c);
  const Problem exact = Kernel::in_dtype(p, DType::float64);
  const at::Tensor dy = random_tensor({4, 33}, Distribution::normal, 11, 100, DType::bfloat16);
  const NamedTensors y = tanh.forward("kprop_reference", p);
  EXPECT_EQ(y.get("y").scalar_type(), at::kDouble);
  EXPECT_TRUE(y.get("y").equal(tanh.forward("kprop_reference", exact).get("y")));
  const NamedTensors g = tanh.backward("kprop_reference", p, NamedTensors{{"dy", dy}});
  const NamedTensors g64 =
      tanh.backward("kprop_reference", exact, NamedTensors{{"dy", dy.to(at::kDouble)}});
  for (const char* name : {"dx", "ds", "db"}) {
    EXPECT_EQ(g.get(name).scalar_type(), at::kDouble) << name;
    EXPECT_TRUE(g.get(name).equal(g64.get(name))) << name;
  }
  // A transposed view of x holding the same values: the same bits.
  Problem strided = p;
  strided.inputs.set("x", p.inputs.get("x").t().contiguous().t());
  ASSERT_FALSE(strided.inputs.get("x").is_contiguous());
  EXPECT_TRUE(tanh.backward("kprop_reference", strided, NamedTensors{{"dy", dy}}).get("dx").equal(g.get("dx")));
}

// scaled_tanh's toys declare no backward: theirs is autograd of each one's own forward (or
// of the one it names), in fp32 (rounded once to the input dtype), its masks included.
TEST(KernelSpec, AnImplementationWithoutABackwardGetsAutogradOfItsOwnForward) {
  const Kernel& tanh = find_kernel("scaled_tanh");
  Case c;
  c.kernel = "scaled_tanh";
  c.dtype = DType::bfloat16;
  c.seed = 5;
  c.params = {{"rows", int64_t{3}}, {"cols", int64_t{15}}, {"bias", true}};
  const Problem p = tanh.materialize(c);
  const at::Tensor dy = random_tensor({3, 15}, Distribution::normal, 5, 100, DType::bfloat16);
  const at::Tensor x = p.inputs.get("x").to(at::kFloat), s = p.inputs.get("s").to(at::kFloat);
  const at::Tensor t = x.tanh(), dyf = dy.to(at::kFloat);
  const NamedTensors g = tanh.backward("kprop_toy", p, NamedTensors{{"dy", dy}});
  EXPECT_TRUE(g.get("dx").equal((dyf * s * (1 - t * t)).to(at::kBFloat16)));
  EXPECT_TRUE(g.get("ds").equal((dyf * t).to(at::kBFloat16)));
  EXPECT_TRUE(g.get("db").equal(dyf.sum(0).to(at::kBFloat16)));
  // toy@bias adds b twice in the whole block, but its backward is autograd of the right
  // forward (backward_by_autograd_of): db as the toy's, while y is not.
  const NamedTensors bias = tanh.backward("kprop_toy_bias", p, NamedTensors{{"dy", dy}});
  EXPECT_TRUE(bias.get("db").equal(g.get("db")));
  EXPECT_TRUE(bias.get("dx").equal(g.get("dx")));
  EXPECT_FALSE(tanh.forward("kprop_toy_bias", p).get("y").equal(tanh.forward("kprop_toy", p).get("y")));
  // toy@tail never writes column 6 of a 7-column rest: no gradient flows there.
  c.set("cols", int64_t{7});
  const NamedTensors ones{{"dy", at::ones({3, 7}, at::kBFloat16)}};
  const at::Tensor dx = tanh.backward("kprop_toy_tail", tanh.materialize(c), ones).get("dx");
  EXPECT_TRUE(dx.select(1, 6).eq(0).all().item<bool>());
  EXPECT_TRUE(dx.slice(1, 0, 6).ne(0).any().item<bool>());
}

TEST(KernelSpec, SchemasAreDerivedWhenTheSpecGivesNone) {
  KernelSpec k = probe();
  k.operator_params = {"n"};
  const auto kernel = compile_spec(k);
  EXPECT_EQ(kernel->operator_schemas().first, "spec_probe_fwd(Tensor x, Tensor? s, int n) -> (Tensor y)");
  EXPECT_EQ(kernel->operator_schemas().second,
            "spec_probe_bwd(Tensor x, Tensor? s, Tensor dy, int n) -> (Tensor dx, Tensor ds)");
}

TEST(KernelSpec, ImplementationNamespacesAreDerivedFromNames) {
  EXPECT_EQ(implementation_namespace("reference"), "kprop_reference");
  EXPECT_EQ(implementation_namespace("flat@gelu_in_dtype"), "kprop_flat_gelu_in_dtype");
  const auto impls = find_kernel("scaled_tanh").implementations();
  ASSERT_EQ(impls.size(), 4u);
  EXPECT_EQ(impls[2].name, "toy@tail");
  EXPECT_EQ(impls[2].op_namespace, "kprop_toy_tail");
  EXPECT_TRUE(has_operator("kprop_toy_tail::scaled_tanh_bwd"));
}

TEST(KernelSpec, BadDeclarationsNameTheKernelAndTheField) {
  auto with = [](auto edit) {
    KernelSpec k = probe();
    edit(k);
    return usage_error(std::move(k));
  };
  EXPECT_EQ(with([](KernelSpec& k) { k.inputs.push_back({"x", {"n"}}); }),
            "kernel spec_probe: tensor 'x' is declared twice");
  EXPECT_EQ(with([](KernelSpec& k) { k.outputs[0].dims = {"m"}; }),
            "kernel spec_probe: tensor 'y': dimension 'm' is not declared");
  EXPECT_EQ(with([](KernelSpec& k) { k.bounds.erase("dx"); }), "kernel spec_probe: bounds: 'dx' has no bound");
  EXPECT_EQ(with([](KernelSpec& k) { k.bounds["dz"] = Bound::elementwise(1); }),
            "kernel spec_probe: bounds: 'dz' is no output or gradient");
  EXPECT_EQ(with([](KernelSpec& k) { k.bounds["dx"] = Bound::sum_over("m", {}); }),
            "kernel spec_probe: bounds: 'dx' sums over 'm', which is not a declared dimension");
  EXPECT_EQ(with([](KernelSpec& k) { k.reordered_by_layout = {"dz"}; }),
            "kernel spec_probe: reordered_by_layout: 'dz' is no output or gradient");
  EXPECT_EQ(with([](KernelSpec& k) { k.inputs[0].neutral(0.0); }),
            "kernel spec_probe: tensor 'x': a neutral value needs an input a flag leaves out "
            "(when_flag)");
  EXPECT_EQ(with([](KernelSpec& k) { k.inputs[0].stored_as("backwards", {0, 0}); }),
            "kernel spec_probe: tensor 'x': storage order 'backwards' is no order of its 1 dimensions");
  EXPECT_EQ(with([](KernelSpec& k) { k.default_implementation = "fast"; }),
            "kernel spec_probe: default_implementation 'fast' is not declared");
  EXPECT_EQ(with([](KernelSpec& k) { k.known_defects = {defect("typo").in({"fast"})}; }),
            "kernel spec_probe: known defect 'typo': implementation 'fast' is not declared");
  EXPECT_EQ(with([](KernelSpec& k) { k.reference = nullptr; }), "kernel spec_probe: reference is missing");
  EXPECT_EQ(with([](KernelSpec& k) { k.implementations = {{"fast", "", nullptr}}; }),
            "kernel spec_probe: implementation 'fast': its forward is missing");
  EXPECT_EQ(with([](KernelSpec& k) {
              k.implementations = {ImplementationSpec("fast", "", k.reference, k.reference)
                                       .backward_by_autograd_of(k.reference)};
            }),
            "kernel spec_probe: implementation 'fast': a backward and backward_by_autograd_of "
            "both given");
  EXPECT_EQ(with([](KernelSpec& k) {
              k.forward_schema = "spec_probe_fwd(Tensor x, Tensor? s, Tensor w) -> (Tensor y)";
              k.backward_schema = "spec_probe_bwd(Tensor x, Tensor? s, Tensor dy) -> (Tensor dx, Tensor ds)";
            }),
            "kernel spec_probe: forward schema: argument 'w' is no input");
  EXPECT_EQ(with([](KernelSpec& k) {
              k.forward_schema = "spec_probe_fwd(Tensor x, Tensor? s, str n) -> (Tensor y)";
              k.backward_schema = "spec_probe_bwd(Tensor x, Tensor? s, Tensor dy) -> (Tensor dx, Tensor ds)";
            }),
            "kernel spec_probe: forward schema: argument 'n' is str but the parameter is integer");
  EXPECT_EQ(with([](KernelSpec& k) {
              k.forward_schema = "probe_fwd(Tensor x, Tensor? s) -> (Tensor y)";
              k.backward_schema = "spec_probe_bwd(Tensor x, Tensor? s, Tensor dy) -> (Tensor dx, Tensor ds)";
            }),
            "kernel spec_probe: forward schema: the operator is 'probe_fwd', not 'spec_probe_fwd'");
  EXPECT_EQ(with([](KernelSpec& k) {
              k.forward_schema = "spec_probe_fwd(Tensor x, Tensor? s) -> (Tensor y)";
              k.backward_schema = "spec_probe_bwd(Tensor x, Tensor? s, Tensor dy) -> (Tensor dx, Tensor dq)";
            }),
            "kernel spec_probe: backward schema: return 'dq' is no input's gradient");
}

TEST(KernelSpec, UndeclaredDimensionsAreTheIntegerParametersOfTheirName) {
  KernelSpec k = probe();
  k.dims.clear();
  const auto kernel = compile_spec(k);
  EXPECT_EQ(kernel->materialize(probe_case(5, true)).inputs.get("s").sizes(), (std::vector<int64_t>{5}));
  const KernelSpec& compiled = kernel->declaration();
  ASSERT_EQ(compiled.dims.size(), 1u);
  EXPECT_EQ(compiled.dims[0].name, "n");
  // A flag is no size: naming one is still an undeclared dimension.
  k.outputs[0].dims = {"with_s"};
  EXPECT_EQ(usage_error(k), "kernel spec_probe: tensor 'y': dimension 'with_s' is not declared");
}

TEST(KernelSpec, TheDefaultImplementationIsTheFirstDeclared) {
  KernelSpec k = probe();
  k.default_implementation.clear();
  EXPECT_EQ(compile_spec(k)->default_implementation(), "reference");
  const OpFunction same = [](const OpArgs& a) { return NamedTensors{{"y", a["x"] * 2}}; };
  k.implementations = {{"first", "", same, same}, {"second", "", same, same}};
  EXPECT_EQ(compile_spec(k)->default_implementation(), "first");
  EXPECT_EQ(find_kernel("scaled_tanh").default_implementation(), "toy");
}

TEST(KernelSpec, ADefectShapeGivenAsValuesIsCheckedAndCompiled) {
  KernelSpec k = probe();
  k.known_defects = {defect("typo").in({"reference"}).when("n=3 with_s=true")};
  const auto kernel = compile_spec(k);
  const auto shape = kernel->known_defects()[0].shape;
  ASSERT_TRUE(shape);
  EXPECT_TRUE(shape(probe_case(3, true)));
  EXPECT_FALSE(shape(probe_case(4, true)));
  EXPECT_FALSE(shape(probe_case(3, false)));
  k.known_defects = {defect("typo").in({"reference"}).when("m=3")};
  EXPECT_EQ(usage_error(k), "kernel spec_probe: known defect 'typo': when: 'm=3' is not NAME=VALUE of a parameter");
  k.known_defects = {defect("typo").in({"reference"}).when("with_s=maybe")};
  EXPECT_NE(usage_error(k).find("kernel spec_probe: known defect 'typo': when: "), std::string::npos);
  // scaled_tanh's, as declared: one row of the remainder alone, no bias.
  Case c = probe_case(1, false);
  c.params = {{"rows", int64_t{1}}, {"cols", int64_t{7}}, {"bias", false}};
  EXPECT_TRUE(find_kernel("scaled_tanh").known_defects()[0].shape(c));
  c.set("rows", int64_t{2});
  EXPECT_FALSE(find_kernel("scaled_tanh").known_defects()[0].shape(c));
}

TEST(KernelSpec, BlockRegionsNameWholeBlocksTheRemainderAndTheLastElement) {
  const RegionRule rule = RegionRule::blocks("cols", 8, "column");
  Case c;
  c.set("cols", int64_t{19});
  EXPECT_EQ(rule.dim, "cols");
  EXPECT_EQ(rule.name(c, 0), "8-wide blocks");
  EXPECT_EQ(rule.name(c, 15), "8-wide blocks");
  EXPECT_EQ(rule.name(c, 16), "remainder");
  EXPECT_EQ(rule.name(c, 18), "last column");
  c.set("cols", int64_t{16});
  EXPECT_EQ(rule.name(c, 15), "8-wide blocks");  // no partial block: no remainder
}

TEST(KernelSpec, ExtentsDeclareTheirLimitsInTheSchema) {
  KernelSpec k = probe();
  k.params[0] = extent("n", "elements", 64, {"max_n", 8});
  const auto kernel = compile_spec(k);
  const Schema& schema = kernel->schema();
  const Limit* limit = schema.find_limit("max_n");
  ASSERT_NE(limit, nullptr);
  EXPECT_EQ(limit->default_value, 8);
  EXPECT_EQ(limit->max, 64);
  EXPECT_EQ(limit->meaning, "most n a case draws");
  const auto* max_cols = find_kernel("scaled_tanh").schema().find_limit("max_cols");
  ASSERT_NE(max_cols, nullptr);
  EXPECT_EQ(max_cols->default_value, 64);
  EXPECT_EQ(max_cols->meaning, "most cols of a uniform draw (block edges aside)");
  // in_blocks_of leans on the block edges and shrinks along whole blocks.
  const ParamSpec cols = extent("cols", "columns", 4096, {"max_cols", 64}).in_blocks_of(8);
  const Case none;
  const CaseSpace space;
  const auto options = cols.draw(DrawContext{none, space});
  ASSERT_EQ(options.size(), 3u);
  EXPECT_EQ(options[0].values, (std::vector<int64_t>{7, 8, 9, 15, 16, 17, 31, 32, 33}));
  EXPECT_EQ(options[1].hi_limit, "max_cols");
  EXPECT_EQ(cols.shrinks(19, none, 0).at(1), 3);  // the remainder alone, after 1
}

TEST(KernelSpec, OpArgsReadTheSignaturesNamesAndSetAddsOrReplaces) {
  const std::vector<std::string> names{"x", "b", "num_cores"};
  OpArgs a(&names, {c10::IValue(at::ones({2})), c10::IValue(), c10::IValue(int64_t{48})});
  EXPECT_TRUE(a["x"].defined());
  EXPECT_FALSE(a["b"].defined());  // None: an absent optional tensor
  EXPECT_FALSE(a["dy"].defined());  // no such argument
  EXPECT_EQ(a.integer("num_cores"), 48);
  EXPECT_THROW(a.integer("W"), std::out_of_range);
  a.set("b", at::zeros({2}));
  a.set("dy", at::full({2}, 3.0));
  EXPECT_TRUE(a["b"].defined());
  EXPECT_EQ(a["dy"][0].item<float>(), 3.0f);
  EXPECT_EQ(names.size(), 3u);  // the signature's names stay as they are
}

TEST(Takes, ACaseOutsideWhatItTakesIsNotRunAndSaysWhy) {
  declare_takes("scaled_tanh", "toy@bias", Takes{{DType::float32}, {}, {{"cols", {1, 8}}}, {}, {{"bias", true}}});
  Case c;
  c.kernel = "scaled_tanh";
  c.impl = "toy@bias";
  c.params = {{"rows", int64_t{1}}, {"cols", int64_t{8}}, {"bias", true}};
  EXPECT_EQ(not_taken(c), std::nullopt);
  c.dtype = DType::float64;
  EXPECT_EQ(not_taken(c), "float64 is not among its dtypes (float32)");
  EXPECT_EQ(not_taken(c, /*check_dtype=*/false), std::nullopt);
  c.dtype = DType::float32;
  c.set("cols", int64_t{9});
  EXPECT_EQ(not_taken(c), "cols = 9 is outside 1..8");
  const Verdict v = evaluate(c);
  EXPECT_EQ(v.status, Verdict::Status::skipped);
  EXPECT_EQ(v.message, "not taken: cols = 9 is outside 1..8");
  c.set("cols", int64_t{8});
  c.set("bias", false);
  EXPECT_EQ(not_taken(c), "bias = false is not taken");
  // Inside, the planted defect still fails: a declaration never hides a defect it takes.
  c.set("bias", true);
  EXPECT_EQ(evaluate(c).status, Verdict::Status::fail);
  // gradient adapts: float64 runs in float32 against the reference's gradient.
  c.property = "gradient";
  c.dtype = DType::float64;
  const Verdict g = evaluate(c);
  EXPECT_NE(g.message.find("toy@bias takes no float64: its backward in float32"), std::string::npos) << g.message;
  EXPECT_EQ(g.status, Verdict::Status::pass) << g.signature();  // its backward is right
  EXPECT_EQ(g.tensors.size(), 3u);  // dx, ds, db: the gradients alone
  declare_takes("scaled_tanh", "toy@bias", Takes{});
}

TEST(Takes, BadDeclarationsNameTheKernelTheImplementationAndTheField) {
  auto error = [](Takes t) {
    try {
      declare_takes("scaled_tanh", "mine::scaled_tanh", std::move(t));
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error(Takes{{}, {}, {{"W", {1, 2}}}, {}, {}}),
            "kernel scaled_tanh, implementation mine::scaled_tanh: takes ranges: 'W' is no parameter of scaled_tanh");
  EXPECT_EQ(error(Takes{{}, {}, {{"bias", {1, 2}}}, {}, {}}),
            "kernel scaled_tanh, implementation mine::scaled_tanh: takes ranges: 'bias' is flag, not integer");
  EXPECT_EQ(error(Takes{{}, {"tpu"}, {}, {}, {}}),
            "kernel scaled_tanh, implementation mine::scaled_tanh: takes devices: 'tpu' is not cpu or cuda");
}

}  // namespace
}  // namespace kprop
