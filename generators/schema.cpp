#include "generators/schema.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "core/errors.h"
#include "generators/value_steps.h"

namespace kprop {

int64_t CaseSpace::limit(const Schema& schema, const std::string& name) const {
  const Limit* l = schema.find_limit(name);
  if (!l) throw std::logic_error(fmt::format("{}: no limit '{}'", schema.kernel, name));
  const auto it = limits.find(name);
  const int64_t v = it == limits.end() ? l->default_value : it->second;
  return std::clamp(v, l->min, l->max);
}

std::vector<DType> CaseSpace::dtype_choices() const {
  return dtypes.empty() ? std::vector<DType>{DType::float32} : dtypes;
}

ParamSpec param_spec(std::string name, ParamType type, std::string meaning, ParamValue simplest) {
  ParamSpec p;
  p.name = std::move(name);
  p.type = type;
  p.meaning = std::move(meaning);
  p.simplest = std::move(simplest);
  return p;
}

ParamSpec flag_param(std::string name, std::string meaning) {
  return param_spec(std::move(name), ParamType::flag, std::move(meaning), false);
}

ParamSpec choice_param(std::string name, std::string meaning, std::vector<std::string> choices,
                       std::vector<uint32_t> weights) {
  ParamSpec p = param_spec(std::move(name), ParamType::choice, std::move(meaning), choices.front());
  p.choices = std::move(choices);
  p.weights = std::move(weights);
  return p;
}

int64_t DrawContext::limit(const std::string& name) const {
  if (!schema) throw std::logic_error("DrawContext: no schema to read limit '" + name + "' from");
  return space.limit(*schema, name);
}

ParamSpec extent(std::string name, std::string meaning, int64_t max, Limit limit) {
  limit.min = 1;
  limit.max = max;
  if (limit.meaning.empty()) limit.meaning = "most " + name + " a case draws";
  ParamSpec p = param_spec(std::move(name), ParamType::integer, std::move(meaning), int64_t{1});
  p.within(1, max).drawn({IntOption::just(30, 1), IntOption::just(15, 2),
                          IntOption::up_to(55, 1, limit.name)});
  p.limit = std::move(limit);
  return p;
}

std::vector<int64_t> around(std::initializer_list<int64_t> points) {
  std::vector<int64_t> out;
  for (int64_t p : points)
    for (int64_t d : {-1, 0, 1}) out.push_back(p + d);
  return out;
}

ParamSpec& ParamSpec::in_blocks_of(int64_t width) {
  const std::string up_to = limit ? limit->name : "";
  if (up_to.empty()) throw std::logic_error(name + ": in_blocks_of() needs an extent() with a limit");
  drawn({IntOption::any_of(50, around({width, 2 * width, 4 * width})), IntOption::up_to(40, 1, up_to), IntOption::just(10, 1)});
  shrinking(along_blocks(width));
  if (limit->meaning == "most " + name + " a case draws")
    limit->meaning = "most " + name + " of a uniform draw (block edges aside)";
  return *this;
}

ListEntries ListEntries::all(std::string list) {
  const std::string name = list;
  return {std::move(list), [name](const Case& c) {
            std::vector<size_t> every(c.integers(name).size());
            std::iota(every.begin(), every.end(), size_t{0});
            return every;
          }};
}

ListEntries ListEntries::last(std::string list) {
  const std::string name = list;
  return {std::move(list), [name](const Case& c) {
            const size_t n = c.integers(name).size();
            return n == 0 ? std::vector<size_t>{} : std::vector<size_t>{n - 1};
          }};
}

const ParamSpec* Schema::find(const std::string& name) const {
  for (const auto& p : params)
    if (p.name == name) return &p;
  return nullptr;
}

const ParamSpec& Schema::at(const std::string& name) const {
  if (const auto* p = find(name)) return *p;
  throw std::logic_error(fmt::format("{}: no parameter '{}'", kernel, name));
}

const Limit* Schema::find_limit(const std::string& name) const {
  for (const auto& l : limits)
    if (l.name == name) return &l;
  return nullptr;
}

std::vector<std::string> Schema::param_names() const {
  std::vector<std::string> names;
  for (const auto& p : params) names.push_back(p.name);
  return names;
}

std::vector<std::string> Schema::shrink_names() const {
  return shrink_order.empty() ? param_names() : shrink_order;
}

namespace {

bool same_type(const ParamSpec& spec, const ParamValue& v) { return type_of(v) == spec.type; }

std::string type_words(ParamType t) {
  switch (t) {
    case ParamType::integer: return "an integer";
    case ParamType::flag: return "true or false";
    case ParamType::choice: return "a string";
    case ParamType::integers: return "a list of integers";
  }
  return "?";
}

// The count an integer list must have in `c` (nullopt: free within min..max).
std::optional<size_t> required_count(const ParamSpec& spec, const Case& c) {
  if (spec.list.same_count_as.empty()) return std::nullopt;
  const auto it = c.params.find(spec.list.same_count_as);
  if (it == c.params.end() || type_of(it->second) != ParamType::integers) return std::nullopt;
  return std::get<std::vector<int64_t>>(it->second).size();
}

}  // namespace

Bounds entry_count(const ParamSpec& spec, const Case& c) {
  const Bounds all{std::max<int64_t>(spec.list.min_count, 0), spec.list.max_count};
  if (!spec.list.count) return all;
  const Bounds b = spec.list.count(c);
  return {all.clamp(b.lo), all.clamp(b.hi), b.why};
}

std::vector<std::string> validate(const Schema& schema, const Case& c) {
  std::vector<std::string> problems;
  if (c.kernel != schema.kernel)
    problems.push_back(fmt::format("kernel: '{}' is not {}", c.kernel, schema.kernel));
  for (const auto& [name, value] : c.params)
    if (!schema.find(name))
      problems.push_back(fmt::format("{}: unknown parameter of {}; known: {}", name,
                                     schema.kernel, fmt::join(schema.param_names(), ", ")));
  for (const auto& spec : schema.params) {
    const auto it = c.params.find(spec.name);
    if (it == c.params.end()) {
      problems.push_back(fmt::format("{}: missing", spec.name));
      continue;
    }
    const ParamValue& v = it->second;
    if (!same_type(spec, v)) {
      problems.push_back(fmt::format("{}: must be {}", spec.name, type_words(spec.type)));
      continue;
    }
    switch (spec.type) {
      case ParamType::integer: {
        const Bounds b = spec.bounds_in(c, 0);
        const int64_t x = std::get<int64_t>(v);
        if (!b.contains(x))
          problems.push_back(fmt::format("{}: {} is outside {}..{}{}", spec.name, x, b.lo, b.hi,
                                         b.why ? fmt::format(" ({})", b.why) : ""));
        break;
      }
      case ParamType::flag: break;
      case ParamType::choice: {
        const auto& s = std::get<std::string>(v);
        if (std::find(spec.choices.begin(), spec.choices.end(), s) == spec.choices.end())
          problems.push_back(fmt::format("{}: unknown value '{}' ({})", spec.name, s,
                                         fmt::join(spec.choices, ", ")));
        break;
      }
      case ParamType::integers: {
        const auto& xs = std::get<std::vector<int64_t>>(v);
        const auto n = static_cast<int64_t>(xs.size());
        if (const auto need = required_count(spec, c)) {
          if (xs.size() != *need && !(xs.empty() && spec.list.may_be_empty))
            problems.push_back(fmt::format("{}: {} entries for {} in {}", spec.name, n, *need,
                                           spec.list.same_count_as));
        } else if (const Bounds count = entry_count(spec, c); n < count.lo) {
          problems.push_back(fmt::format("{}: at least {} entries are needed (got {}){}",
                                         spec.name, count.lo, n,
                                         count.why ? fmt::format(" ({})", count.why) : ""));
        } else if (n > count.hi && n <= spec.list.max_count) {
          problems.push_back(fmt::format("{}: at most {} entries (got {}){}", spec.name,
                                         count.hi, n,
                                         count.why ? fmt::format(" ({})", count.why) : ""));
        }
        if (n > spec.list.max_count) {
          problems.push_back(fmt::format("{}: at most {} entries (got {})", spec.name,
                                         spec.list.max_count, n));
          break;
        }
        for (size_t i = 0; i < xs.size(); ++i) {
          const Bounds b = spec.bounds_in(c, i);
          if (!b.contains(xs[i]))
            problems.push_back(fmt::format("{}[{}]: {} is outside {}..{}{}", spec.name, i, xs[i],
                                           b.lo, b.hi, b.why ? fmt::format(" ({})", b.why) : ""));
        }
        break;
      }
    }
  }
  if (problems.empty() && schema.check)
    for (auto& p : schema.check(c)) problems.push_back(std::move(p));
  return problems;
}

void fit(const Schema& schema, Case& c, const std::vector<std::string>& keep) {
  for (const auto& spec : schema.params) {
    if (std::find(keep.begin(), keep.end(), spec.name) != keep.end() && c.has(spec.name))
      continue;
    auto it = c.params.find(spec.name);
    if (it == c.params.end() || !same_type(spec, it->second)) {
      c.params[spec.name] = spec.before_it_existed.value_or(spec.simplest);
      it = c.params.find(spec.name);
    }
    ParamValue& v = it->second;
    switch (spec.type) {
      case ParamType::integer:
        v = spec.bounds_in(c, 0).clamp(std::get<int64_t>(v));
        break;
      case ParamType::flag: break;
      case ParamType::choice:
        if (std::find(spec.choices.begin(), spec.choices.end(), std::get<std::string>(v)) ==
            spec.choices.end())
          v = spec.simplest;
        break;
      case ParamType::integers: {
        auto xs = std::get<std::vector<int64_t>>(v);
        if (const auto need = required_count(spec, c)) {
          if (xs.size() != *need) {
            if (spec.list.may_be_empty) xs.clear();
            else xs.resize(*need, spec.element_simplest);
          }
        } else {
          const Bounds count = entry_count(spec, c);
          if (static_cast<int64_t>(xs.size()) > count.hi) xs.resize(static_cast<size_t>(count.hi));
          while (static_cast<int64_t>(xs.size()) < count.lo) xs.push_back(spec.element_simplest);
        }
        // Element bounds may read earlier elements (equal lengths): clamp in order.
        v = xs;
        for (size_t i = 0; i < xs.size(); ++i) {
          xs[i] = spec.bounds_in(c, i).clamp(xs[i]);
          v = xs;
        }
        break;
      }
    }
  }
}

Case simplest_case(const Schema& schema, const Case& base) {
  Case c = base;
  c.kernel = schema.kernel;
  c.params.clear();
  for (const auto& spec : schema.params) c.params[spec.name] = spec.simplest_in(c);
  fit(schema, c);
  return c;
}

Case default_case(const Schema& schema, const Case& base) {
  Case c = base;
  c.kernel = schema.kernel;
  c.params.clear();
  for (const auto& spec : schema.params)
    c.params[spec.name] = spec.default_value.value_or(spec.simplest);
  fit(schema, c);
  return c;
}

int64_t max_elements() {
  if (const char* env = std::getenv("KPROP_MAX_ELEMENTS"))
    if (const auto v = parse_integer(env); v && *v > 0) return *v;
  return int64_t{1} << 24;
}

void refuse_too_large(const Schema& schema, const Case& c, const std::string& where) {
  if (!schema.size_check) return;
  if (const auto too_big = schema.size_check(c); !too_big.empty())
    throw CaseError(fmt::format("{}.{}", where, too_big.front()));
}

std::string summary(const Schema& schema, const Case& c) {
  std::string s;
  for (const auto& spec : schema.params) {
    const auto it = c.params.find(spec.name);
    if (it == c.params.end()) continue;
    if (!s.empty()) s += " ";
    s += fmt::format("{}={}", spec.name, to_text(it->second));
  }
  return fmt::format("{} {} {} seed={} {}{}", schema.kernel, s, to_string(c.dtype), c.seed,
                     to_string(c.distribution),
                     c.cotangents == Cotangents::random ? "" : " cotangents=" + to_string(c.cotangents));
}

ParamValue parse_param(const ParamSpec& spec, const std::string& text) {
  const auto integer = [&](const std::string& item) {
    const auto v = parse_integer(item);
    if (!v) throw CaseError(fmt::format("parameter {}: '{}' is not an integer", spec.name, item));
    return *v;
  };
  switch (spec.type) {
    case ParamType::integer: return integer(text);
    case ParamType::flag:
      if (text == "true" || text == "1" || text == "on") return true;
      if (text == "false" || text == "0" || text == "off") return false;
      throw CaseError(fmt::format("parameter {}: '{}' is not true or false", spec.name, text));
    case ParamType::choice:
      if (std::find(spec.choices.begin(), spec.choices.end(), text) == spec.choices.end())
        throw CaseError(fmt::format("parameter {}: unknown value '{}' ({})", spec.name, text,
                                    fmt::join(spec.choices, ", ")));
      return text;
    case ParamType::integers: {
      std::vector<int64_t> out;
      if (text.empty()) return out;
      std::stringstream ss(text);
      std::string item;
      while (std::getline(ss, item, ',')) out.push_back(integer(item));
      return out;
    }
  }
  throw std::logic_error("parse_param: unknown type");
}

std::vector<std::string> settable_names(const Schema& schema) {
  std::vector<std::string> names{"impl", "property", "dtype", "seed", "distribution", "cotangents"};
  for (const auto& p : schema.params) names.push_back(p.name);
  for (const auto& d : schema.derived) names.push_back(d.name);
  return names;
}

void set_param(const Schema& schema, Case& c, const std::string& name, const std::string& text) {
  if (name == "impl") {
    c.impl = text;
  } else if (name == "property") {
    c.property = text;
  } else if (name == "dtype") {
    const auto d = parse_dtype(text);
    if (!d) throw CaseError(fmt::format("parameter dtype: unknown value '{}'", text));
    c.dtype = *d;
  } else if (name == "distribution") {
    const auto d = parse_distribution(text);
    if (!d) throw CaseError(fmt::format("parameter distribution: unknown value '{}'", text));
    c.distribution = *d;
  } else if (name == "cotangents") {
    const auto k = parse_cotangents(text);
    if (!k)
      throw CaseError(fmt::format("parameter cotangents: unknown value '{}' ({})", text,
                                  cotangent_names(", ")));
    c.cotangents = *k;
  } else if (name == "seed") {
    const auto v = parse_unsigned(text);
    if (!v)
      throw CaseError(fmt::format("parameter seed: '{}' is not an integer in 0..2^64-1", text));
    c.seed = *v;
  } else if (const ParamSpec* spec = schema.find(name)) {
    c.params[name] = parse_param(*spec, text);
    fit(schema, c, {name});
    return;
  } else {
    const auto d = std::find_if(schema.derived.begin(), schema.derived.end(),
                                [&](const DerivedParam& p) { return p.name == name; });
    if (d == schema.derived.end())
      throw CaseError(fmt::format("unknown parameter '{}' of {}; known: {}", name,
                                  schema.kernel, fmt::join(settable_names(schema), ", ")));
    d->set(c, text);
    fit(schema, c, d->changes);
    return;
  }
  fit(schema, c);
}

std::string get_param(const Schema& schema, const Case& c, const std::string& name) {
  if (name == "impl") return c.impl;
  if (name == "property") return c.property;
  if (name == "dtype") return to_string(c.dtype);
  if (name == "distribution") return to_string(c.distribution);
  if (name == "cotangents") return to_string(c.cotangents);
  if (name == "seed") return std::to_string(c.seed);
  if (schema.find(name)) {
    const auto it = c.params.find(name);
    return it == c.params.end() ? "" : to_text(it->second);
  }
  for (const auto& d : schema.derived)
    if (d.name == name) return d.get(c);
  throw CaseError(fmt::format("unknown parameter '{}' of {}; known: {}", name, schema.kernel,
                              fmt::join(settable_names(schema), ", ")));
}

std::vector<std::string> needs(const Schema& schema, const Case& c) {
  std::vector<std::string> out;
  for (const auto& spec : schema.params) {
    const auto it = c.params.find(spec.name);
    if (it == c.params.end() || it->second == spec.simplest) continue;
    const ParamValue& v = it->second;
    switch (spec.type) {
      case ParamType::flag: out.push_back(spec.name); break;
      case ParamType::choice: out.push_back(spec.name + "=" + to_text(v)); break;
      case ParamType::integers: {
        const auto n = std::get<std::vector<int64_t>>(v).size();
        if (n != std::get<std::vector<int64_t>>(spec.simplest).size())
          out.push_back(fmt::format("{} {}", n, spec.name));
        break;
      }
      case ParamType::integer: break;  // a size, not a switch: W = 3 or 4 is one defect
    }
  }
  return out;
}

}  // namespace kprop
