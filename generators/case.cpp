#include "generators/case.h"

#include <fmt/format.h>

#include <tuple>

#include "core/errors.h"

namespace kprop {

namespace {

template <typename T>
const T& read(const Case& c, const std::string& name) {
  const auto it = c.params.find(name);
  if (it == c.params.end())
    throw std::logic_error(fmt::format("{} case has no parameter '{}'", c.kernel, name));
  if (const T* v = std::get_if<T>(&it->second)) return *v;
  throw std::logic_error(fmt::format("{} case: parameter '{}' is a {}", c.kernel, name,
                                     to_string(type_of(it->second))));
}

auto as_tuple(const Case& c) {
  return std::tie(c.kernel, c.impl, c.property, c.dtype, c.seed, c.distribution, c.cotangents,
                  c.params);
}

}  // namespace

int64_t Case::integer(const std::string& name) const { return read<int64_t>(*this, name); }
bool Case::flag(const std::string& name) const { return read<bool>(*this, name); }
const std::string& Case::choice(const std::string& name) const {
  return read<std::string>(*this, name);
}
const std::vector<int64_t>& Case::integers(const std::string& name) const {
  return read<std::vector<int64_t>>(*this, name);
}

bool Case::operator==(const Case& other) const { return as_tuple(*this) == as_tuple(other); }

std::ostream& operator<<(std::ostream& os, const Case& c) {
  os << c.impl << " " << c.property << " " << c.kernel;
  for (const auto& [name, value] : c.params) os << " " << name << "=" << to_text(value);
  os << " " << to_string(c.dtype) << " seed=" << c.seed << " " << to_string(c.distribution);
  if (c.cotangents != Cotangents::random) os << " cotangents=" << to_string(c.cotangents);
  return os;
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

std::string to_string(Distribution d) {
  switch (d) {
    case Distribution::normal: return "normal";
    case Distribution::uniform: return "uniform";
    case Distribution::heavy_tailed: return "heavy_tailed";
    case Distribution::small_integers: return "small_integers";
  }
  return "?";
}

std::string to_string(Cotangents c) {
  switch (c) {
    case Cotangents::random: return "random";
    case Cotangents::ones: return "ones";
    case Cotangents::zero_first: return "zero_first";
    case Cotangents::scalar: return "scalar";
    case Cotangents::per_row: return "per_row";
  }
  return "?";
}

std::vector<Cotangents> all_cotangents() {
  return {Cotangents::random, Cotangents::ones, Cotangents::zero_first, Cotangents::scalar,
          Cotangents::per_row};
}

std::string cotangent_names(const std::string& separator) {
  std::string out;
  for (auto c : all_cotangents()) out += (out.empty() ? "" : separator) + to_string(c);
  return out;
}

std::optional<Cotangents> parse_cotangents(const std::string& s) {
  for (auto c : all_cotangents())
    if (s == to_string(c)) return c;
  return std::nullopt;
}

std::vector<DType> all_dtypes() {
  return {DType::float64, DType::float32, DType::bfloat16, DType::float16};
}

std::vector<Distribution> all_distributions() {
  return {Distribution::normal, Distribution::uniform, Distribution::heavy_tailed,
          Distribution::small_integers};
}

std::optional<DType> parse_dtype(const std::string& s) {
  if (s == "float64" || s == "f64" || s == "double") return DType::float64;
  if (s == "float32" || s == "f32" || s == "float") return DType::float32;
  if (s == "bfloat16" || s == "bf16") return DType::bfloat16;
  if (s == "float16" || s == "f16" || s == "half") return DType::float16;
  return std::nullopt;
}

std::optional<Distribution> parse_distribution(const std::string& s) {
  for (auto d : all_distributions())
    if (s == to_string(d)) return d;
  return std::nullopt;
}

}  // namespace kprop
