#include "generators/case.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <numeric>
#include <tuple>

namespace kprop {

int64_t Case::total_length() const {
  return std::accumulate(lengths.begin(), lengths.end(), int64_t{0});
}

std::vector<int64_t> Case::effective_splits() const {
  if (!splits.empty()) return splits;
  std::vector<int64_t> half;
  for (int64_t L : lengths) half.push_back(std::max<int64_t>(1, L / 2));
  return half;
}

static auto as_tuple(const Case& c) {
  return std::tie(c.kernel, c.impl, c.property, c.layout, c.lengths, c.D, c.W, c.num_cores,
                  c.dtype, c.activation, c.has_bias, c.has_initial_state,
                  c.has_final_state_grad, c.splits, c.seed, c.distribution);
}

bool Case::operator==(const Case& other) const { return as_tuple(*this) == as_tuple(other); }

std::vector<std::string> validate(const Case& c) {
  std::vector<std::string> problems;
  if (c.lengths.empty()) problems.push_back("lengths: at least one sequence is needed");
  for (size_t i = 0; i < c.lengths.size(); ++i)
    if (c.lengths[i] < 1)
      problems.push_back(fmt::format("lengths[{}]: zero-length segment ({})", i, c.lengths[i]));
  if (c.layout == Layout::dense)
    for (size_t i = 1; i < c.lengths.size(); ++i)
      if (c.lengths[i] != c.lengths[0])
        problems.push_back(fmt::format(
            "lengths[{}]: dense layout needs equal lengths ({} != {})", i, c.lengths[i],
            c.lengths[0]));
  if (c.D < 1) problems.push_back(fmt::format("D: must be >= 1 (got {})", c.D));
  if (c.W < 1) problems.push_back(fmt::format("W: must be >= 1 (got {})", c.W));
  if (c.num_cores < 1)
    problems.push_back(fmt::format("num_cores: must be >= 1 (got {})", c.num_cores));
  if (!c.splits.empty()) {
    if (c.splits.size() != c.lengths.size())
      problems.push_back(fmt::format("splits: {} entries for {} sequences", c.splits.size(),
                                     c.lengths.size()));
    else
      for (size_t i = 0; i < c.splits.size(); ++i)
        if (c.splits[i] < 1 || c.splits[i] > c.lengths[i])
          problems.push_back(fmt::format("splits[{}]: {} is outside 1..{}", i, c.splits[i],
                                         c.lengths[i]));
  }
  return problems;
}

std::string summary(const Case& c) {
  std::string flags;
  if (c.has_bias) flags += "+bias";
  if (c.has_initial_state) flags += "+h0";
  if (c.has_final_state_grad) flags += "+dht";
  std::string s = fmt::format("{} {} lengths={} D={} W={} cores={} {} act={} {}", c.kernel,
                              to_string(c.layout), c.lengths, c.D, c.W, c.num_cores,
                              to_string(c.dtype), to_string(c.activation), flags);
  if (!c.splits.empty()) s += fmt::format(" splits={}", c.splits);
  s += fmt::format(" seed={} {}", c.seed, to_string(c.distribution));
  return s;
}

std::ostream& operator<<(std::ostream& os, const Case& c) {
  return os << c.impl << " " << c.property << " " << summary(c);
}

std::string to_string(DType d) {
  switch (d) {
    case DType::float64: return "float64";
    case DType::float32: return "float32";
    case DType::bfloat16: return "bfloat16";
    case DType::float16: return "float16";
  }
  return "?";
}
std::string to_string(Activation a) { return a == Activation::silu ? "silu" : "none"; }
std::string to_string(Distribution d) {
  switch (d) {
    case Distribution::normal: return "normal";
    case Distribution::uniform: return "uniform";
    case Distribution::heavy_tailed: return "heavy_tailed";
    case Distribution::small_integers: return "small_integers";
  }
  return "?";
}
std::string to_string(Layout l) { return l == Layout::dense ? "dense" : "packed"; }

std::optional<DType> parse_dtype(const std::string& s) {
  if (s == "float64" || s == "f64" || s == "double") return DType::float64;
  if (s == "float32" || s == "f32" || s == "float") return DType::float32;
  if (s == "bfloat16" || s == "bf16") return DType::bfloat16;
  if (s == "float16" || s == "f16" || s == "half") return DType::float16;
  return std::nullopt;
}
std::optional<Activation> parse_activation(const std::string& s) {
  if (s == "none" || s.empty()) return Activation::none;
  if (s == "silu" || s == "swish") return Activation::silu;
  return std::nullopt;
}
std::optional<Distribution> parse_distribution(const std::string& s) {
  for (auto d : {Distribution::normal, Distribution::uniform, Distribution::heavy_tailed,
                 Distribution::small_integers})
    if (s == to_string(d)) return d;
  return std::nullopt;
}
std::optional<Layout> parse_layout(const std::string& s) {
  if (s == "packed") return Layout::packed;
  if (s == "dense") return Layout::dense;
  return std::nullopt;
}

}  // namespace kprop
