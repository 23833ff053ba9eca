// Sweeps (harness/presentation/sweep.h): axis and metric parsing, real grids over causal_conv1d,
// and the Markdown, JSON and SVG renderings a person reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/errors.h"
#include "generators/schema.h"
#include "harness/model/kernel.h"
#include "harness/presentation/svg_heatmap.h"
#include "harness/presentation/sweep.h"
#include "kernels/causal_conv1d/shape.h"
#include "kernels/causal_conv1d/tiling.h"

namespace kprop {
namespace {

using Values = std::vector<std::string>;
using causal_conv1d::conv_shape;

// An axis of a causal_conv1d sweep.
Axis axis(const std::string& spec) { return parse_axis("causal_conv1d", spec); }

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The message of the UsageError that parsing `spec` throws ("" when none is thrown).
std::string axis_error(const std::string& spec) {
  try {
    axis(spec);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

// Every tag closed in order, attribute values quoted, text free of raw '<' and of '&'
// that does not start an entity: enough of XML's well-formedness to catch a broken writer.
::testing::AssertionResult well_formed_xml(const std::string& xml) {
  std::vector<std::string> open;
  size_t i = 0;
  while (i < xml.size()) {
    if (xml[i] == '&') {
      const auto semicolon = xml.find(';', i);
      const std::string entity = xml.substr(i, semicolon - i + 1);
      if (entity != "&amp;" && entity != "&lt;" && entity != "&gt;" && entity != "&quot;" &&
          entity != "&apos;")
        return ::testing::AssertionFailure() << "bad entity at " << i << ": " << entity;
      i = semicolon + 1;
      continue;
    }
    if (xml[i] != '<') {
      if (xml[i] == '>') return ::testing::AssertionFailure() << "raw '>' at " << i;
      ++i;
      continue;
    }
    // A tag: find its end outside quoted attribute values.
    size_t end = i + 1;
    char quote = 0;
    for (; end < xml.size(); ++end) {
      if (quote) {
        if (xml[end] == quote) quote = 0;
        else if (xml[end] == '<') return ::testing::AssertionFailure() << "'<' in attribute";
      } else if (xml[end] == '"' || xml[end] == '\'') {
        quote = xml[end];
      } else if (xml[end] == '>') {
        break;
      }
    }
    if (end == xml.size()) return ::testing::AssertionFailure() << "unterminated tag at " << i;
    const std::string tag = xml.substr(i + 1, end - i - 1);
    const bool closing = tag[0] == '/', self_closing = tag.back() == '/';
    const std::string name =
        tag.substr(closing ? 1 : 0, tag.find_first_of(" /\n", closing ? 1 : 0) - (closing ? 1 : 0));
    if (closing) {
      if (open.empty() || open.back() != name)
        return ::testing::AssertionFailure()
               << "</" << name << "> closes <" << (open.empty() ? "" : open.back()) << ">";
      open.pop_back();
    } else if (!self_closing) {
      open.push_back(name);
    }
    i = end + 1;
  }
  if (!open.empty()) return ::testing::AssertionFailure() << "<" << open.back() << "> not closed";
  return ::testing::AssertionSuccess();
}

// The dh0 case of the brief: one sequence of `length`, h0 without dht, float64, 48 cores.
SweepSpec dh0_spec(const std::string& impl, const std::string& metric) {
  SweepSpec spec;
  spec.kernel = "causal_conv1d";
  spec.impl = impl;
  spec.property = "gradient";
  spec.x = axis("W=2,4");
  spec.y = axis("length=2,8");
  spec.set = {"num_cores=48", "initial_state=true", "final_state_grad=false", "dtype=float64"};
  spec.metric = parse_metric(metric);
  return spec;
}

TEST(SweepTest, ParsesLists) {
  const Axis w = axis("W=2,4,8");
  EXPECT_EQ(w.name, "W");
  EXPECT_EQ(w.values, (Values{"2", "4", "8"}));
  EXPECT_EQ(axis("dtype=float32,bfloat16").values, (Values{"float32", "bfloat16"}));
  EXPECT_EQ(axis("num_cores=48").values, (Values{"48"}));
  EXPECT_EQ(axis("W = 2, 4").values, (Values{"2", "4"}));
}

TEST(SweepTest, ParsesLinearRanges) {
  EXPECT_EQ(axis("length=1..4").values, (Values{"1", "2", "3", "4"}));
  EXPECT_EQ(axis("length=2..10:4").values, (Values{"2", "6", "10"}));
  EXPECT_EQ(axis("D=1..6:2").values, (Values{"1", "3", "5"}));
  EXPECT_EQ(axis("W=3..3").values, (Values{"3"}));
}

TEST(SweepTest, ParsesGeometricRangesIncludingTheEndOnlyWhenHit) {
  EXPECT_EQ(axis("tail=16..384*2").values, (Values{"16", "32", "64", "128", "256"}));
  EXPECT_EQ(axis("length=1..8*2").values, (Values{"1", "2", "4", "8"}));
  EXPECT_EQ(axis("length=1..100*10").values, (Values{"1", "10", "100"}));
}

TEST(SweepTest, MixesValuesAndRangesInOneList) {
  EXPECT_EQ(axis("W=1,4..6,16..64*4").values, (Values{"1", "4", "5", "6", "16", "64"}));
}

TEST(SweepTest, BadAxesAreUsageErrorsNamingTheAxis) {
  for (const std::string spec :
       {"W=", "W=2,,4", "W=8..2", "W=1..4:0", "W=1..4*1", "W=0..8*2", "W=a..4", "W=1..b",
        "W=1..4:x", "W=1..1000000"}) {
    const std::string message = axis_error(spec);
    EXPECT_NE(message.find("axis W"), std::string::npos) << spec << " -> '" << message << "'";
  }
  EXPECT_NE(axis_error("Wx=2").find("axis Wx: unknown parameter"), std::string::npos);
  EXPECT_NE(axis_error("W").find("NAME=VALUES"), std::string::npos);
  EXPECT_NE(axis_error("=2").find("'=2'"), std::string::npos);
}

TEST(SweepTest, ParsesMetrics) {
  EXPECT_EQ(parse_metric("verdict").kind, Metric::Kind::verdict);
  const Metric ratio = parse_metric("ratio:dh0");
  EXPECT_EQ(ratio.kind, Metric::Kind::ratio);
  EXPECT_EQ(ratio.tensor, "dh0");
  EXPECT_EQ(ratio.name(), "ratio:dh0");
  EXPECT_EQ(parse_metric("chunked_ratio:dw").kind, Metric::Kind::chunked_ratio);
  EXPECT_EQ(parse_metric("error_over_bound:dx").name(), "error_over_bound:dx");
  for (const std::string bad : {"ratio", "ratio:", "speed", "verdict:dh0"})
    EXPECT_THROW(parse_metric(bad), UsageError) << bad;
}

TEST(SweepTest, BaseCaseTakesTheSpecThenTheOverrides) {
  SweepSpec spec;
  spec.kernel = "causal_conv1d";
  spec.impl = "tiled@original";
  spec.property = "gradient";
  spec.seed = 7;
  spec.set = {"num_cores=24", "dtype=float64", "W=3"};
  const Case c = base_case(spec);
  EXPECT_EQ(c.impl, "tiled@original");
  EXPECT_EQ(c.property, "gradient");
  EXPECT_EQ(c.seed, 7u);
  EXPECT_EQ(c.kernel, "causal_conv1d");
  EXPECT_EQ(conv_shape(c).num_cores, 24);
  EXPECT_EQ(c.dtype, DType::float64);
  EXPECT_EQ(conv_shape(c).W, 3);
  // Everything not set is the schema's default case.
  EXPECT_EQ(conv_shape(c).lengths, (std::vector<int64_t>{16}));
  EXPECT_EQ(conv_shape(c).D, 32);
  EXPECT_TRUE(conv_shape(c).has_bias);
  EXPECT_TRUE(conv_shape(c).has_initial_state);
  const Case cell = cell_case(c, axis("W=2,8"), 1, axis("length=5"), 0);
  EXPECT_EQ(conv_shape(cell).W, 8);
  EXPECT_EQ(conv_shape(cell).lengths, (std::vector<int64_t>{5}));

  spec.set = {"W"};
  EXPECT_THROW(base_case(spec), UsageError);
  spec.set = {"W=wide"};
  EXPECT_THROW(base_case(spec), CaseError);
}

// SweepSpec: an empty kernel is the registry's default, an empty impl the kernel's own.
TEST(SweepTest, EmptyKernelAndImplMeanTheDefaults) {
  ASSERT_EQ(default_kernel(), "causal_conv1d");
  SweepSpec spec;
  spec.property = "gradient";
  spec.x = parse_axis("", "W=2,4");
  spec.y = parse_axis("", "length=2,8");
  spec.set = {"num_cores=48", "initial_state=true", "final_state_grad=false", "dtype=float64"};
  spec.metric = parse_metric("verdict");
  EXPECT_EQ(spec.x.values, (Values{"2", "4"}));
  const Case c = base_case(spec);
  EXPECT_EQ(c.kernel, "causal_conv1d");
  EXPECT_EQ(c.impl, "tiled");
  SweepResult r;
  try {
    r = run_sweep_grid(spec);
  } catch (const UsageError& e) {
    FAIL() << "a sweep with an empty kernel and impl did not take the defaults: " << e.what();
  }
  EXPECT_EQ(r.at(1, 1).label(), "pass");
  EXPECT_NE(to_markdown(r).find("## verdict of causal_conv1d tiled, property gradient"),
            std::string::npos)
      << to_markdown(r);
}

TEST(SweepTest, BadSweepsStopBeforeTheFirstCell) {
  SweepSpec spec = dh0_spec("tiled", "ratio:dh0");
  spec.x = axis("W=2,wide");
  EXPECT_THROW(run_sweep_grid(spec), UsageError);
  spec = dh0_spec("tiled", "ratio:dh0");
  spec.y = axis("W=4");
  EXPECT_THROW(run_sweep_grid(spec), UsageError);  // the same parameter twice
  spec = dh0_spec("no_such_impl", "ratio:dh0");
  EXPECT_THROW(run_sweep_grid(spec), UsageError);
  spec = dh0_spec("tiled", "ratio:dh_typo");
  EXPECT_THROW(run_sweep_grid(spec), UsageError);  // no cell has that tensor
}

TEST(SweepTest, RatioOfDh0ShowsTheOverCountWhereTheTileIsNarrowerThanW) {
  const SweepResult original = run_sweep_grid(dh0_spec("tiled@original", "ratio:dh0"));
  const SweepResult tiled = run_sweep_grid(dh0_spec("tiled", "ratio:dh0"));
  ASSERT_EQ(original.cells.size(), 2u);
  ASSERT_EQ(original.cells[0].size(), 2u);
  for (size_t yi = 0; yi < 2; ++yi)
    for (size_t xi = 0; xi < 2; ++xi) {
      const int64_t W = std::stoll(original.spec.x.values[xi]);
      const int64_t length = std::stoll(original.spec.y.values[yi]);
      const int64_t BT = causal_conv1d::backward_tiles(length, W, true, 48, false).BT;
      const SweepCell& cell = original.at(xi, yi);
      ASSERT_EQ(cell.kind, SweepCell::Kind::number) << cell.label() << " " << cell.detail;
      // In float64 a correct dh0 matches to ~1e-15; the over-count moves the norm by as
      // little as 7% here (W=4, length=2), so "clearly" means well above rounding.
      if (BT < W)
        EXPECT_GT(std::abs(cell.value - 1), 0.01) << "W=" << W << " length=" << length;
      else
        EXPECT_NEAR(cell.value, 1, 1e-9) << "W=" << W << " length=" << length;
      ASSERT_EQ(tiled.at(xi, yi).kind, SweepCell::Kind::number);
      EXPECT_NEAR(tiled.at(xi, yi).value, 1, 1e-9) << "W=" << W << " length=" << length;
      EXPECT_EQ(tiled.at(xi, yi).label(), "1");
    }
}

TEST(SweepTest, ChunkedRatioIsNotApplicableWhereNothingContinues) {
  SweepSpec spec = dh0_spec("tiled", "chunked_ratio:dh0");
  spec.y = axis("length=1,8");
  const SweepResult r = run_sweep_grid(spec);
  EXPECT_EQ(r.at(0, 0).kind, SweepCell::Kind::not_applicable);
  EXPECT_EQ(r.at(0, 0).label(), "n/a");
  ASSERT_EQ(r.at(0, 1).kind, SweepCell::Kind::number) << r.at(0, 1).detail;
  EXPECT_NEAR(r.at(0, 1).value, 1, 1e-6);
}

TEST(SweepTest, VerdictCellsAreLabelledWithTheSignatureKept) {
  const SweepResult original = run_sweep_grid(dh0_spec("tiled@original", "verdict"));
  const SweepCell& failing = original.at(0, 0);
  EXPECT_EQ(failing.kind, SweepCell::Kind::fail);
  EXPECT_EQ(failing.label(), "fail");
  EXPECT_EQ(failing.detail.rfind("causal_conv1d/tiled@original/gradient/", 0), 0u)
      << failing.detail;
  EXPECT_NE(failing.detail.find("dh0"), std::string::npos) << failing.detail;
  EXPECT_EQ(run_sweep_grid(dh0_spec("tiled", "verdict")).at(1, 1).label(), "pass");

  // tiled@clamped refuses W > 8, as the kernel it emulates; a zero length is impossible.
  SweepSpec spec = dh0_spec("tiled@clamped", "verdict");
  spec.x = axis("W=16");
  spec.y = axis("length=0,8");
  const SweepResult r = run_sweep_grid(spec);
  EXPECT_EQ(r.at(0, 0).label(), "invalid");
  EXPECT_NE(r.at(0, 0).detail.find("lengths[0]"), std::string::npos);
  EXPECT_EQ(r.at(0, 1).label(), "rejected");
  EXPECT_FALSE(r.at(0, 1).detail.empty());
}

TEST(SweepTest, ErrorOverBoundIsTheLargestRowOfTheTensor) {
  const SweepResult r = run_sweep_grid(dh0_spec("tiled@original", "error_over_bound:dh0"));
  ASSERT_EQ(r.at(0, 0).kind, SweepCell::Kind::number) << r.at(0, 0).detail;
  EXPECT_GT(r.at(0, 0).value, 1);
  const SweepResult ok = run_sweep_grid(dh0_spec("tiled", "error_over_bound:dh0"));
  ASSERT_EQ(ok.at(0, 0).kind, SweepCell::Kind::number);
  EXPECT_LE(ok.at(0, 0).value, 1);
}

// The fixed parameters of a one-cell sweep as "name=value ..." in the order shown.
std::string fixed_of(const SweepSpec& spec) {
  std::string out;
  for (const auto& [name, value] : run_sweep_grid(spec).fixed)
    out += (out.empty() ? "" : " ") + name + "=" + value;
  return out;
}

// What causal_conv1d's schema declares about its derived axes, as a sweep shows it: the
// entries of `lengths` that `length` and `tail` set are named by the axis (when there are
// several sequences), the derived names themselves are never fixed, and `splits` (one
// entry per sequence) varies with the lengths.
TEST(SweepTest, FixedNamesTheEntriesOfAListADerivedAxisSets) {
  SweepSpec spec = dh0_spec("tiled", "verdict");
  spec.x = axis("W=2");
  const std::string common = "dtype=float64 seed=0 distribution=normal cotangents=random layout=packed";
  const std::string rest =
      "initial_state=true D=32 num_cores=48 activation=none bias=true final_state_grad=false";

  spec.y = axis("tail=5");
  spec.set.push_back("lengths=1,7");
  spec.set.push_back("splits=1,2");
  EXPECT_EQ(fixed_of(spec), common + " lengths=1,tail " + rest);
  spec.y = axis("length=5");
  EXPECT_EQ(fixed_of(spec), common + " lengths=length,length " + rest);
  spec.y = axis("lengths=3,4");
  EXPECT_EQ(fixed_of(spec), common + " " + rest);
  // Both derived axes: `length` sets every entry, then `tail` the last (declaration order).
  spec.x = axis("tail=3");
  spec.y = axis("length=5");
  spec.set.push_back("lengths=1,2,3");
  spec.set.push_back("splits=1,1,1");
  EXPECT_EQ(fixed_of(spec), "dtype=float64 seed=0 distribution=normal cotangents=random W=4 layout=packed "
                            "lengths=length,length,tail " + rest);
  // One sequence: the axis says it all.
  spec.x = axis("W=2");
  spec.set = {"num_cores=48", "initial_state=true", "final_state_grad=false", "dtype=float64"};
  spec.y = axis("length=5");
  EXPECT_EQ(fixed_of(spec), common + " " + rest);
  spec.y = axis("tail=5");
  EXPECT_EQ(fixed_of(spec), common + " " + rest);
  // No axis over the lengths: they and the splits are fixed as they are.
  spec.y = axis("D=32");
  spec.set.push_back("lengths=2,6");
  spec.set.push_back("splits=1,3");
  EXPECT_EQ(fixed_of(spec),
            common + " lengths=2,6 splits=1,3 initial_state=true num_cores=48 activation=none "
                     "bias=true final_state_grad=false");
}

// A kernel of blocks whose derived axes are named unlike any real kernel's: `width` sets
// every entry of `widths`, `head` the first, `spread` some (without saying which), `deep`
// a plain integer; `offsets` has one entry per block. What a sweep shows as fixed comes
// from these declarations alone.
Schema blocks_schema() {
  Schema s;
  s.kernel = "blocks";
  ParamSpec depth = param_spec("depth", ParamType::integer, "a size", int64_t{1});
  depth.default_value = int64_t{3};
  depth.static_bounds = {1, 64};
  ParamSpec widths = param_spec("widths", ParamType::integers, "width of each block",
                                std::vector<int64_t>{1});
  widths.default_value = std::vector<int64_t>{2, 3, 5};
  widths.static_bounds = {1, 1024};
  widths.list.min_count = 1;
  ParamSpec offsets = param_spec("offsets", ParamType::integers, "offset of each block",
                                 std::vector<int64_t>{});
  offsets.default_value = std::vector<int64_t>{1, 1, 1};
  offsets.depends_on = {"widths"};
  offsets.static_bounds = {0, 1024};
  offsets.list.same_count_as = "widths";
  offsets.list.may_be_empty = true;
  s.params = {depth, widths, offsets};

  // Sets the given entries of `widths` (all of them when `which` is empty).
  const auto set_widths = [](std::vector<size_t> which) {
    return [which](Case& c, const std::string& text) {
      auto w = c.integers("widths");
      for (size_t i = 0; i < w.size(); ++i)
        if (which.empty() || std::find(which.begin(), which.end(), i) != which.end())
          w[i] = std::stoll(text);
      c.set("widths", w);
    };
  };
  const auto first_width = [](const Case& c) { return std::to_string(c.integers("widths")[0]); };
  s.derived = {
      {"width", "every block's width", {"widths"}, set_widths({}), first_width,
       ListEntries::all("widths")},
      {"head", "the first block's width", {"widths"}, set_widths({0}), first_width,
       ListEntries{"widths", [](const Case&) { return std::vector<size_t>{0}; }}},
      {"spread", "the widths of the later blocks", {"widths"}, set_widths({1, 2}), first_width,
       std::nullopt},
      {"deep", "twice the depth", {"depth"},
       [](Case& c, const std::string& text) { c.set("depth", 2 * std::stoll(text)); },
       [](const Case& c) { return std::to_string(c.integer("depth") / 2); }},
  };
  return s;
}

// fixed_parameters() of a sweep of blocks_schema() along x and y, as "name=value ...".
std::string blocks_fixed(const std::string& x, const std::string& y,
                         const std::vector<int64_t>& widths = {2, 3, 5}) {
  static const Schema schema = blocks_schema();
  Case base;
  base = default_case(schema, base);
  base.set("widths", widths);
  base.set("offsets", std::vector<int64_t>(widths.size(), 1));
  SweepSpec spec;
  spec.kernel = schema.kernel;
  spec.x = Axis{x, {"4"}};
  spec.y = Axis{y, {"4"}};
  std::string out;
  for (const auto& [name, value] : fixed_parameters(schema, spec, base))
    out += (out.empty() ? "" : " ") + name + "=" + value;
  return out;
}

TEST(SweepTest, FixedReadsWhatADerivedAxisSetsFromTheSchema) {
  const std::string common = "dtype=float32 seed=0 distribution=normal cotangents=random";
  // Nothing derived swept: every parameter as it is, no derived name.
  EXPECT_EQ(blocks_fixed("seed", "dtype"),
            "distribution=normal cotangents=random depth=3 widths=2,3,5 offsets=1,1,1");
  // The entries the axis sets are named by it; the list that follows widths varies.
  EXPECT_EQ(blocks_fixed("head", "depth"), common + " widths=head,3,5");
  EXPECT_EQ(blocks_fixed("width", "depth"), common + " widths=width,width,width");
  // Two derived axes on one list: in the schema's order, `head` after `width`.
  EXPECT_EQ(blocks_fixed("head", "width"), common + " depth=3 widths=head,width,width");
  // The list swept itself: neither it nor the list that follows it is fixed.
  EXPECT_EQ(blocks_fixed("widths", "depth"), common);
  // One block: the axis says it all.
  EXPECT_EQ(blocks_fixed("head", "depth", {7}), common);
  // A derived axis that does not say which entries it sets: the list is not shown.
  EXPECT_EQ(blocks_fixed("spread", "depth"), common);
  EXPECT_EQ(blocks_fixed("spread", "head"), common + " depth=3");
  // A derived axis that sets an integer: that integer varies.
  EXPECT_EQ(blocks_fixed("deep", "seed"),
            "dtype=float32 distribution=normal cotangents=random widths=2,3,5 offsets=1,1,1");
}

TEST(SweepTest, NumberLabels) {
  SweepCell cell;
  cell.kind = SweepCell::Kind::number;
  cell.value = 2.5;
  EXPECT_EQ(cell.label(), "2.5");
  cell.value = 1.0 + 1e-12;
  EXPECT_EQ(cell.label(), "1");
  cell.value = INFINITY;
  EXPECT_EQ(cell.label(), "inf");
  cell.value = 0;
  EXPECT_EQ(cell.label(), "0");
}

TEST(SweepTest, MarkdownHasATitleAndOneRowPerYValue) {
  SweepSpec spec = dh0_spec("tiled@original", "ratio:dh0");
  spec.y = axis("length=2,8,16");
  const SweepResult r = run_sweep_grid(spec);
  const std::string md = to_markdown(r);
  EXPECT_NE(md.find("## ratio:dh0 of causal_conv1d tiled@original, property gradient"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("`num_cores=48`"), std::string::npos) << md;
  EXPECT_NE(md.find("`dtype=float64`"), std::string::npos) << md;
  EXPECT_NE(md.find("| length \\ W | 2 | 4 |\n|---|---:|---:|\n"), std::string::npos) << md;
  size_t table_rows = 0;
  for (const auto& y : r.spec.y.values) table_rows += count(md, "\n| " + y + " |");
  EXPECT_EQ(table_rows, 3u) << md;
  EXPECT_EQ(count(md, "\n|"), 2u + 3u) << md;  // header, rule, one row per y value
}

TEST(SweepTest, VerdictMarkdownRefersFailuresToTheirSignature) {
  const std::string md = to_markdown(run_sweep_grid(dh0_spec("tiled@original", "verdict")));
  EXPECT_NE(md.find("fail (1)"), std::string::npos) << md;
  EXPECT_NE(md.find("1. fail: causal_conv1d/tiled@original/gradient/"), std::string::npos)
      << md;
}

TEST(SweepTest, JsonHoldsAxesAndCells) {
  const SweepResult r = run_sweep_grid(dh0_spec("tiled", "ratio:dh0"));
  const auto j = to_json(r);
  EXPECT_EQ(j["metric"], "ratio:dh0");
  EXPECT_EQ(j["x"]["name"], "W");
  EXPECT_EQ(j["y"]["values"], nlohmann::json(Values{"2", "8"}));
  ASSERT_EQ(j["cells"].size(), 2u);
  ASSERT_EQ(j["cells"][0].size(), 2u);
  EXPECT_EQ(j["cells"][1][0]["status"], "number");
  EXPECT_NEAR(j["cells"][1][0]["value"].get<double>(), 1, 1e-9);
  EXPECT_EQ(j["fixed"]["num_cores"], "48");
}

TEST(SweepTest, SvgIsStandaloneWithOneRectPerCell) {
  const SweepResult r = run_sweep_grid(dh0_spec("tiled@original", "ratio:dh0"));
  const std::string svg = render_svg(to_heatmap(r));
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_EQ(count(svg, "<rect"), 4u);
  EXPECT_TRUE(well_formed_xml(svg));
  EXPECT_NE(svg.find(">ratio:dh0 of causal_conv1d tiled@original, property gradient<"),
            std::string::npos);
}

TEST(SweepTest, SvgVerdictColoursAndEscapedText) {
  Heatmap h;
  h.title = "a < b & \"c\" > 'd'";
  h.x_label = "W";
  h.y_label = "length";
  h.x_ticks = {"2", "4", "<8>"};
  h.y_ticks = {"16"};
  h.scale = ColourScale::categorical;
  h.cells = {{{"pass", NAN, "pass", "ok"},
              {"fail", NAN, "fail", "causal_conv1d/x/y/dh0 [a<b]"},
              {"rejected", NAN, "rejected", "D & W"}}};
  const std::string svg = render_svg(h);
  EXPECT_TRUE(well_formed_xml(svg));
  EXPECT_EQ(count(svg, "<rect"), 3u);
  EXPECT_NE(svg.find("a &lt; b &amp; &quot;c&quot; &gt; &apos;d&apos;"), std::string::npos);
  EXPECT_NE(svg.find("&lt;8&gt;"), std::string::npos);
  EXPECT_NE(svg.find("[a&lt;b]"), std::string::npos);
  EXPECT_EQ(svg.find("a < b"), std::string::npos);
  EXPECT_NE(svg.find("fill=\"#4dac26\""), std::string::npos);  // pass: green
  EXPECT_NE(svg.find("fill=\"#d7191c\""), std::string::npos);  // fail: red
  EXPECT_NE(svg.find("fill=\"#b0b0b0\""), std::string::npos);  // rejected: grey
}

TEST(SweepTest, SvgLogScaleLeavesOneNeutral) {
  Heatmap h;
  h.x_ticks = {"a", "b", "c"};
  h.y_ticks = {"r"};
  h.scale = ColourScale::log_centred;
  h.cells = {{{"1", 1.0, "", ""}, {"4", 4.0, "", ""}, {"0.25", 0.25, "", ""}}};
  const std::string svg = render_svg(h);
  EXPECT_TRUE(well_formed_xml(svg));
  EXPECT_NE(svg.find("fill=\"#f7f7f7\""), std::string::npos);  // 1: neutral
  EXPECT_NE(svg.find("fill=\"#b2182b\""), std::string::npos);  // 4: the full high colour
  EXPECT_NE(svg.find("fill=\"#2166ac\""), std::string::npos);  // 1/4: the full low colour
  EXPECT_EQ(xml_escape("<&>"), "&lt;&amp;&gt;");
}

}  // namespace
}  // namespace kprop
