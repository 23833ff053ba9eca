// What flash-linear-attention's state-carrying kernels (kernels/linear_attn,
// kernels/delta_rule) declare alike: the head sizes fla uses, q's scale, where `chunked`
// cuts a sequence, and fla's chunk of 64 tokens that the draws lean on.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "generators/schema.h"

namespace kprop::fla_recurrent {

constexpr int64_t kChunk = 64;  // fla's chunk (BT) for its chunked kernels

// A head size: 1; fla's 60, 64, 100, 128 (and sizes that are not powers of two); or up to
// the limit max_<name> (`head_size_limits`).
inline ParamSpec head_size(const std::string& name, const std::string& meaning) {
  return param_spec(name, ParamType::integer, meaning, int64_t{1})
      .by_default(int64_t{4})
      .within(1, 256)
      .drawn(std::vector<IntOption>{IntOption::just(20, 1), IntOption::any_of(30, {60, 64, 100, 128}),
                                    IntOption::up_to(50, 1, "max_" + name)});
}

inline std::vector<Limit> head_size_limits() {
  return {{"max_k_dim", 8, 1, 256, "largest k_dim drawn uniformly"},
          {"max_v_dim", 8, 1, 256, "largest v_dim drawn uniformly"}};
}

// q's scale: fla's default k_dim^-0.5, or 1.
inline ParamSpec scale_param() {
  return choice_param("scale", "q's scale: fla's default k_dim^-0.5, or 1", {"default", "1"}, {70, 30});
}

inline double scale_of(const std::string& scale, int64_t k_dim) {
  return scale == "default" ? 1.0 / std::sqrt(static_cast<double>(k_dim)) : std::stod(scale);
}

// Where `chunked` cuts each sequence (at most seq - 1): a cut inside fla's chunk, on its
// edge, and one past.
inline ParamSpec split_param() {
  return param_spec("split", ParamType::integer, "tokens in the first call when `chunked` cuts", int64_t{1})
      .within(1, 4096)
      .drawn(std::vector<IntOption>{IntOption::just(30, 1), IntOption::up_to(50, 1, "max_seq"),
                                    IntOption::any_of(20, around({kChunk}))});
}

}  // namespace kprop::fla_recurrent
