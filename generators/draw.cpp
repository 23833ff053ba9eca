#include "generators/draw.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/errors.h"

namespace kprop {

namespace {

constexpr uint32_t kDistributionWeights[] = {70, 10, 10, 10};  // normal first
constexpr uint32_t kCotangentWeights[] = {60, 10, 10, 10, 10};   // random first

// Draws (or, with a recorder, re-draws) one case. With a recorder every decision is told
// the value the target case has, and the recorder writes the bytes for it.
class Drawer {
 public:
  Drawer(const Schema& schema, ChoiceSource& source, const CaseSpace& space, const Case* target)
      : schema_(schema), source_(source), space_(space), target_(target) {}

  Case run() {
    Case c;
    c.kernel = schema_.kernel;
    c.impl = space_.impl;
    c.property = space_.property;
    c.seed = source_.data_seed(target_ ? target_->seed : 0);
    const auto dtypes = space_.dtype_choices();
    size_t want_dtype = 0;
    if (target_) {
      const auto it = std::find(dtypes.begin(), dtypes.end(), target_->dtype);
      if (it == dtypes.end())
        throw CaseError(fmt::format("dtype: {} is not among the space's dtypes",
                                    to_string(target_->dtype)));
      want_dtype = static_cast<size_t>(it - dtypes.begin());
    }
    c.dtype = dtypes[source_.pick(std::vector<uint32_t>(dtypes.size(), 1), want_dtype)];
    const auto distributions = all_distributions();
    const size_t want_distribution =
        target_ ? static_cast<size_t>(std::find(distributions.begin(), distributions.end(),
                                                target_->distribution) -
                                      distributions.begin())
                : 0;
    c.distribution = distributions[source_.pick(
        {std::begin(kDistributionWeights), std::end(kDistributionWeights)}, want_distribution)];

    for (const auto& spec : schema_.params) {
      if (const auto it = space_.fixed.find(spec.name); it != space_.fixed.end()) {
        c.params[spec.name] = it->second;
        continue;
      }
      const ParamValue* want = nullptr;
      if (target_) {
        const auto it = target_->params.find(spec.name);
        if (it == target_->params.end())
          throw CaseError(fmt::format("{}: missing", spec.name));
        want = &it->second;
      }
      draw_param(spec, c, want);
    }
    // Drawn last, so that every earlier choice (and a fuzz input written before it existed,
    // which ends first: random) gives the case it gave before.
    const auto cotangents = all_cotangents();
    if (const auto it = space_.fixed.find("cotangents"); it != space_.fixed.end()) {
      c.cotangents = *parse_cotangents(std::get<std::string>(it->second));  // `--set`
      return finish(c);
    }
    const size_t want_cotangents =
        target_ ? static_cast<size_t>(std::find(cotangents.begin(), cotangents.end(),
                                                target_->cotangents) -
                                      cotangents.begin())
                : 0;
    c.cotangents = cotangents[source_.pick(
        {std::begin(kCotangentWeights), std::end(kCotangentWeights)}, want_cotangents)];
    return finish(c);
  }

  Case finish(Case& c) const {
    std::vector<std::string> pinned;
    for (const auto& [name, value] : space_.fixed) pinned.push_back(name);
    fit(schema_, c, pinned);  // a pinned value is validated when the case runs, not clamped
    return c;
  }

 private:
  void draw_param(const ParamSpec& spec, Case& c, const ParamValue* want) {
    switch (spec.type) {
      case ParamType::integer: {
        const int64_t simplest = std::get<int64_t>(spec.simplest_in(c));
        c.params[spec.name] =
            draw_integer(spec, c, 0, simplest, want ? &std::get<int64_t>(*want) : nullptr);
        break;
      }
      case ParamType::flag: {
        const bool simplest = std::get<bool>(spec.simplest);
        const uint32_t on = std::min<uint32_t>(spec.percent_true, 100);
        const uint32_t simplest_weight = simplest ? on : 100 - on;
        const bool wanted = want && std::get<bool>(*want) != simplest;
        c.params[spec.name] =
            source_.flag(simplest_weight, 100 - simplest_weight, wanted) ? !simplest : simplest;
        break;
      }
      case ParamType::choice: {
        // Option 0 is the simplest choice, then the others in declared order.
        std::vector<std::string> order{std::get<std::string>(spec.simplest)};
        std::vector<uint32_t> weights;
        for (size_t i = 0; i < spec.choices.size(); ++i)
          if (spec.choices[i] != order[0]) order.push_back(spec.choices[i]);
        for (const auto& choice : order) {
          const auto i = static_cast<size_t>(
              std::find(spec.choices.begin(), spec.choices.end(), choice) - spec.choices.begin());
          weights.push_back(i < spec.weights.size() ? spec.weights[i] : 1);
        }
        size_t wanted = 0;
        if (want) {
          const auto it = std::find(order.begin(), order.end(), std::get<std::string>(*want));
          if (it == order.end())
            throw CaseError(fmt::format("{}: unknown value '{}'", spec.name,
                                        std::get<std::string>(*want)));
          wanted = static_cast<size_t>(it - order.begin());
        }
        c.params[spec.name] = order[source_.pick(weights, wanted)];
        break;
      }
      case ParamType::integers:
        draw_list(spec, c, want ? &std::get<std::vector<int64_t>>(*want) : nullptr);
        break;
    }
  }

  void draw_list(const ParamSpec& spec, Case& c, const std::vector<int64_t>* want) {
    std::vector<int64_t> xs;
    c.params[spec.name] = xs;
    auto element = [&](size_t i) {
      const int64_t* w = want ? &(*want)[i] : nullptr;
      xs.push_back(draw_integer(spec, c, i, spec.element_simplest, w));
      c.params[spec.name] = xs;
    };
    const ListRule& rule = spec.list;
    if (!rule.same_count_as.empty()) {
      const auto need = c.integers(rule.same_count_as).size();
      if (rule.may_be_empty) {
        const size_t wanted = want && !want->empty() ? 1 : 0;
        if (source_.pick({rule.empty_weight, rule.present_weight}, wanted) == 0) return;
      }
      if (want && want->size() != need)
        throw CaseError(fmt::format("{}: {} entries for {} in {}", spec.name, want->size(), need,
                                    rule.same_count_as));
      for (size_t i = 0; i < need; ++i) element(i);
      return;
    }
    const Bounds count = entry_count(spec, c);
    const int64_t drawn_max =
        std::min(count.hi, rule.drawn_max_count
                               ? rule.drawn_max_count(DrawContext{c, space_, 0, &schema_})
                               : count.hi);
    if (want && static_cast<int64_t>(want->size()) > count.hi)
      throw CaseError(fmt::format("{}: at most {} entries", spec.name, count.hi));
    for (int64_t i = 0; i < count.hi; ++i) {
      if (i >= count.lo) {
        // "One more?": a flag per element, so that a mutated byte changes one choice.
        const uint32_t more = i < drawn_max ? rule.more_weight : 0;
        const size_t wanted = want && static_cast<int64_t>(want->size()) > i ? 1 : 0;
        if (source_.pick({rule.stop_weight, more}, wanted) == 0) break;
      }
      element(static_cast<size_t>(i));
    }
  }

  // Option 0: the simplest value; then the spec's weighted options; last, the whole of
  // the bounds (never drawn at random, reachable from bytes, used to record any value).
  int64_t draw_integer(const ParamSpec& spec, const Case& so_far, size_t index,
                       int64_t simplest, const int64_t* want) {
    const Bounds b = spec.bounds_in(so_far, index);
    simplest = b.clamp(simplest);
    std::vector<IntOption> options =
        spec.draw ? spec.draw(DrawContext{so_far, space_, index, &schema_})
                  : std::vector<IntOption>{IntOption::range(1, b.lo, b.hi)};
    for (auto& o : options) {
      if (!o.hi_limit.empty()) o.hi = space_.limit(schema_, o.hi_limit);
      if (o.values.empty()) {
        const int64_t hi = o.lo + (o.hi - o.lo) * std::clamp(space_.size, 0, 100) / 100;
        o.lo = b.clamp(o.lo);
        o.hi = std::max(o.lo, b.clamp(hi));
      } else {
        for (auto& v : o.values) v = b.clamp(v);
      }
    }
    std::vector<uint32_t> weights{0};
    for (const auto& o : options) weights.push_back(o.weight);
    weights.push_back(0);

    size_t wanted = 0;
    if (want) {
      if (!b.contains(*want))
        throw CaseError(fmt::format("{}: {} is outside {}..{}", spec.name, *want, b.lo, b.hi));
      if (*want != simplest) {
        wanted = weights.size() - 1;
        for (size_t i = 0; i < options.size(); ++i)
          if (options[i].weight > 0 && contains(options[i], *want)) {
            wanted = i + 1;
            break;
          }
      }
    }
    const size_t branch = source_.pick(weights, wanted);
    if (branch == 0) return simplest;
    if (branch == weights.size() - 1) return b.lo + offset(b.lo, b.hi, want);
    const IntOption& o = options[branch - 1];
    if (o.values.empty()) return o.lo + offset(o.lo, o.hi, want);
    const uint64_t at =
        want ? static_cast<uint64_t>(std::find(o.values.begin(), o.values.end(), *want) -
                                     o.values.begin())
             : 0;
    return o.values[source_.below(o.values.size(), at)];
  }

  static bool contains(const IntOption& o, int64_t v) {
    if (o.values.empty()) return v >= o.lo && v <= o.hi;
    return std::find(o.values.begin(), o.values.end(), v) != o.values.end();
  }

  // A value in lo..hi as an offset from lo.
  int64_t offset(int64_t lo, int64_t hi, const int64_t* want) {
    const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    const uint64_t n = span == UINT64_MAX ? UINT64_MAX : span + 1;
    const uint64_t wanted = want ? static_cast<uint64_t>(*want) - static_cast<uint64_t>(lo) : 0;
    return static_cast<int64_t>(source_.below(n, wanted));
  }

  const Schema& schema_;
  ChoiceSource& source_;
  const CaseSpace& space_;
  const Case* target_;
};

}  // namespace

Case draw_case(const Schema& schema, ChoiceSource& source, const CaseSpace& space) {
  return Drawer(schema, source, space, nullptr).run();
}

std::vector<uint8_t> encode(const Schema& schema, const Case& c, const CaseSpace& space) {
  const auto problems = validate(schema, c);
  if (!problems.empty())
    throw CaseError(fmt::format("cannot encode an invalid case: {}", fmt::join(problems, "; ")));
  ChoiceRecorder recorder;
  const Case again = Drawer(schema, recorder, space, &c).run();
  if (again.params != c.params || again.seed != c.seed || again.dtype != c.dtype ||
      again.distribution != c.distribution || again.cotangents != c.cotangents)
    throw CaseError("cannot encode: the case differs from the space's pinned parameters");
  return recorder.bytes();
}

Case decode(const Schema& schema, const uint8_t* data, size_t size, const CaseSpace& space) {
  ByteChoices bytes(data, size);
  return draw_case(schema, bytes, space);
}

}  // namespace kprop
