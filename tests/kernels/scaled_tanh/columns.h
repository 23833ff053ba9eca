// How the toy implementation covers a row: whole 8-wide vector blocks, then the rest of
// the row as one masked 8-wide step. The implementation (toy.cpp), the schema's edge
// values and shrink steps (schema.cpp) and the region names of failures (info.cpp) all
// read this one description, so a failure is named after the code path that made it.
#pragma once

#include <cstdint>
#include <string>

namespace kprop::scaled_tanh {

inline constexpr int64_t kVectorWidth = 8;

// Columns [0, block_columns) lie in whole blocks; the rest form the masked remainder.
inline int64_t block_columns(int64_t cols) { return cols - cols % kVectorWidth; }

// Where column `col` of a row of `cols` lies: "8-wide blocks", or in the remainder, whose
// final column ("last column") is the lane a wrong mask drops first.
inline std::string column_region(int64_t cols, int64_t col) {
  if (col < block_columns(cols)) return "8-wide blocks";
  return col == cols - 1 ? "last column" : "remainder";
}

}  // namespace kprop::scaled_tanh
