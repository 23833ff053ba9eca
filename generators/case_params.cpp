#include "generators/case_params.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sstream>

#include "harness/errors.h"

namespace kprop {

namespace {

int64_t to_int(const std::string& name, const std::string& v) {
  const auto out = parse_integer(v);
  if (!out) throw CaseError(fmt::format("parameter {}: '{}' is not an integer", name, v));
  return *out;
}

bool to_bool(const std::string& name, const std::string& v) {
  if (v == "true" || v == "1" || v == "on") return true;
  if (v == "false" || v == "0" || v == "off") return false;
  throw CaseError(fmt::format("parameter {}: '{}' is not true or false", name, v));
}

std::vector<int64_t> to_ints(const std::string& name, const std::string& v) {
  std::vector<int64_t> out;
  std::stringstream ss(v);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(to_int(name, item));
  return out;
}

template <typename T>
T parsed(const std::string& name, const std::string& v, std::optional<T> p) {
  if (!p) throw CaseError(fmt::format("parameter {}: unknown value '{}'", name, v));
  return *p;
}

}  // namespace

std::optional<int64_t> parse_integer(const std::string& text) {
  size_t used = 0;
  int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used == 0 || used != text.size()) return std::nullopt;
  return value;
}

std::vector<std::string> param_names() {
  return {"impl",   "property", "layout",         "lengths",          "length", "tail",
          "D",      "W",        "num_cores",      "dtype",            "activation",
          "bias",   "initial_state", "final_state_grad", "splits", "seed", "distribution"};
}

void set_param(Case& c, const std::string& name, const std::string& v) {
  if (name == "impl") c.impl = v;
  else if (name == "property") c.property = v;
  else if (name == "layout") c.layout = parsed(name, v, parse_layout(v));
  else if (name == "lengths") c.lengths = to_ints(name, v);
  else if (name == "length") c.lengths.assign(c.lengths.size(), to_int(name, v));
  else if (name == "tail") c.lengths.back() = to_int(name, v);
  else if (name == "D") c.D = to_int(name, v);
  else if (name == "W") c.W = to_int(name, v);
  else if (name == "num_cores") c.num_cores = to_int(name, v);
  else if (name == "dtype") c.dtype = parsed(name, v, parse_dtype(v));
  else if (name == "activation") c.activation = parsed(name, v, parse_activation(v));
  else if (name == "bias") c.has_bias = to_bool(name, v);
  else if (name == "initial_state") c.has_initial_state = to_bool(name, v);
  else if (name == "final_state_grad") c.has_final_state_grad = to_bool(name, v);
  else if (name == "splits") c.splits = v.empty() ? std::vector<int64_t>{} : to_ints(name, v);
  else if (name == "seed") c.seed = static_cast<uint64_t>(std::stoull(v));
  else if (name == "distribution") c.distribution = parsed(name, v, parse_distribution(v));
  else
    throw CaseError(fmt::format("unknown parameter '{}'; known: {}", name,
                                fmt::join(param_names(), ", ")));
  // Splits follow the lengths they split; a changed length invalidates them.
  if ((name == "lengths" || name == "length" || name == "tail") &&
      c.splits.size() != c.lengths.size())
    c.splits.clear();
}

std::string get_param(const Case& c, const std::string& name) {
  if (name == "impl") return c.impl;
  if (name == "property") return c.property;
  if (name == "layout") return to_string(c.layout);
  if (name == "lengths") return fmt::format("{}", fmt::join(c.lengths, ","));
  if (name == "length" || name == "tail") return std::to_string(c.lengths.back());
  if (name == "D") return std::to_string(c.D);
  if (name == "W") return std::to_string(c.W);
  if (name == "num_cores") return std::to_string(c.num_cores);
  if (name == "dtype") return to_string(c.dtype);
  if (name == "activation") return to_string(c.activation);
  if (name == "bias") return c.has_bias ? "true" : "false";
  if (name == "initial_state") return c.has_initial_state ? "true" : "false";
  if (name == "final_state_grad") return c.has_final_state_grad ? "true" : "false";
  if (name == "splits") return fmt::format("{}", fmt::join(c.splits, ","));
  if (name == "seed") return std::to_string(c.seed);
  if (name == "distribution") return to_string(c.distribution);
  throw CaseError(fmt::format("unknown parameter '{}'", name));
}

}  // namespace kprop
