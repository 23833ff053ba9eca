// Tile sizes and grid order of the emulated Ascend causal_conv1d kernels (tiling.h,
// ascend_grid.h): the upstream formulas, as tables, and the chunk order of
// prepare_chunk_indices (packed) and of the dense batch-major grid.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <vector>

#include "kernels/causal_conv1d/ascend_grid.h"
#include "kernels/causal_conv1d/tiling.h"

namespace kprop::causal_conv1d {
namespace {

TEST(TilingTest, CdivRoundsUp) {
  EXPECT_EQ(cdiv(0, 1), 0);
  EXPECT_EQ(cdiv(0, 48), 0);
  EXPECT_EQ(cdiv(1, 1), 1);
  EXPECT_EQ(cdiv(1, 48), 1);
  EXPECT_EQ(cdiv(16, 48), 1);
  EXPECT_EQ(cdiv(47, 48), 1);
  EXPECT_EQ(cdiv(48, 48), 1);
  EXPECT_EQ(cdiv(49, 48), 2);
  EXPECT_EQ(cdiv(96, 48), 2);
  EXPECT_EQ(cdiv(97, 48), 3);
  EXPECT_EQ(cdiv(1000, 48), 21);
  EXPECT_EQ(cdiv(7, 4), 2);
  EXPECT_EQ(cdiv(8, 4), 2);
  EXPECT_EQ(cdiv(9, 4), 3);
}

TEST(TilingTest, NextPow2IsSmallestPowerOfTwoAtLeastN) {
  EXPECT_EQ(next_pow2(-3), 1);
  EXPECT_EQ(next_pow2(0), 1);
  EXPECT_EQ(next_pow2(1), 1);
  EXPECT_EQ(next_pow2(2), 2);
  EXPECT_EQ(next_pow2(3), 4);
  EXPECT_EQ(next_pow2(4), 4);
  EXPECT_EQ(next_pow2(5), 8);
  EXPECT_EQ(next_pow2(9), 16);
  EXPECT_EQ(next_pow2(16), 16);
  EXPECT_EQ(next_pow2(17), 32);
  EXPECT_EQ(next_pow2(21), 32);
  EXPECT_EQ(next_pow2(1000), 1024);
  EXPECT_EQ(next_pow2(int64_t{1} << 40), int64_t{1} << 40);
  EXPECT_EQ(next_pow2((int64_t{1} << 40) + 1), int64_t{1} << 41);
  // Exhaustively: a power of two, >= n, and half of it is < n.
  for (int64_t n = 2; n <= 5000; ++n) {
    const int64_t p = next_pow2(n);
    ASSERT_EQ(p & (p - 1), 0) << n;
    ASSERT_GE(p, n);
    ASSERT_LT(p / 2, n);
  }
}

struct BackwardRow {
  int64_t rows, W;
  bool state;
  int64_t cores;
  bool clamp;
  int64_t BT;
};

TEST(TilingTest, BackwardTilesTable) {
  const std::vector<BackwardRow> table{
      // rows  W  state  cores clamp  BT
      {16, 4, true, 48, false, 1},    // cdiv(16, 48) = 1
      {16, 4, false, 48, false, 1},
      {16, 4, true, 1, false, 8},     // 16 rows per core, capped at 8 with a state
      {16, 4, false, 1, false, 16},   // cap 32 without
      {1, 4, true, 1, false, 8},      // fewer than 16 rows count as 16
      {1, 4, false, 1, false, 16},
      {2, 2, true, 16, false, 1},
      {8, 4, true, 48, false, 1},
      {1000, 4, true, 48, false, 8},  // cdiv(1000, 48) = 21 -> 32 -> capped 8
      {1000, 4, false, 48, false, 32},
      {1000, 4, false, 1, false, 32},  // 1024 -> capped 32
      {100, 4, true, 8, false, 8},     // cdiv(100, 8) = 13 -> 16 -> 8
      {100, 4, false, 8, false, 16},
      {100, 4, false, 40, false, 4},   // cdiv(100, 40) = 3 -> 4
      {64, 4, true, 64, false, 1},     // 1 row per core
      {64, 4, true, 20, false, 4},     // cdiv(64, 20) = 4
      {65, 4, false, 20, false, 4},    // cdiv(65, 20) = 4
      {81, 4, false, 20, false, 8},    // cdiv(81, 20) = 5 -> 8
      // clamp_to_window: BT = max(BT, next_pow2(W))
      {16, 4, true, 48, true, 4},
      {16, 3, true, 48, true, 4},
      {16, 2, true, 48, true, 2},
      {16, 1, true, 48, true, 1},
      {16, 5, true, 48, true, 8},
      {16, 8, true, 48, true, 8},
      {16, 4, true, 1, true, 8},       // already 8 >= 4: unchanged
      {16, 9, true, 48, true, 16},     // the clamp itself exceeds the cap of 8
      {1000, 8, false, 48, true, 32},
      {1000, 2, true, 48, true, 8},
  };
  for (const auto& r : table) {
    const Tiles t = backward_tiles(r.rows, r.W, r.state, r.cores, r.clamp);
    EXPECT_EQ(t.BT, r.BT) << "rows=" << r.rows << " W=" << r.W << " state=" << r.state
                          << " cores=" << r.cores << " clamp=" << r.clamp;
    EXPECT_EQ(t.BD, 32) << "backward BD is always 32";
  }
}

TEST(TilingTest, BackwardTilesInvariants) {
  for (int64_t rows : {1, 2, 7, 16, 17, 33, 100, 513, 1000, 4096, 100000})
    for (int64_t cores : {1, 2, 3, 8, 16, 20, 24, 30, 40, 48, 64})
      for (bool state : {false, true})
        for (int64_t W = 1; W <= 8; ++W) {
          const Tiles plain = backward_tiles(rows, W, state, cores, false);
          const Tiles clamped = backward_tiles(rows, W, state, cores, true);
          ASSERT_EQ(plain.BD, 32);
          ASSERT_EQ(clamped.BD, 32);
          ASSERT_EQ(plain.BT & (plain.BT - 1), 0) << "BT is a power of two";
          ASSERT_GE(plain.BT, 1);
          ASSERT_LE(plain.BT, state ? 8 : 32);
          // The unclamped BT does not depend on W.
          ASSERT_EQ(plain.BT, backward_tiles(rows, 1, state, cores, false).BT);
          ASSERT_GE(clamped.BT, W) << "rows=" << rows << " cores=" << cores << " W=" << W;
          ASSERT_EQ(clamped.BT, std::max(plain.BT, next_pow2(W)));
          // BT = min(cap, next_pow2(cdiv(max(16, rows), cores))).
          ASSERT_EQ(plain.BT, std::min<int64_t>(state ? 8 : 32,
                                                next_pow2(cdiv(std::max<int64_t>(16, rows), cores))));
        }
}

struct ForwardRow {
  int64_t rows;
  bool state;
  int64_t cores;
  int64_t BT, BD;
};

TEST(TilingTest, ForwardTilesTable) {
  const std::vector<ForwardRow> table{
      // rows state cores  BT  BD
      {16, true, 48, 1, 32},
      {16, false, 48, 1, 256},
      {16, true, 1, 16, 32},
      {16, false, 1, 16, 256},
      {1, true, 1, 16, 32},      // fewer than 16 rows count as 16
      {1000, true, 48, 16, 32},  // cdiv(1000, 48) = 21 -> 32 -> capped 16
      {1000, false, 48, 32, 256},
      {1000, true, 1, 16, 32},   // 1024 -> 16
      {1000, false, 1, 32, 256}, // 1024 -> 32
      {100, true, 8, 16, 32},    // 13 -> 16
      {100, false, 8, 16, 256},
      {100, true, 40, 4, 32},    // 3 -> 4
      {100, false, 4, 32, 256},  // 25 -> 32
      {100, true, 4, 16, 32},
      {64, false, 64, 1, 256},
  };
  for (const auto& r : table) {
    const Tiles t = forward_tiles(r.rows, r.state, r.cores);
    EXPECT_EQ(t.BT, r.BT) << "rows=" << r.rows << " state=" << r.state << " cores=" << r.cores;
    EXPECT_EQ(t.BD, r.BD) << "rows=" << r.rows << " state=" << r.state << " cores=" << r.cores;
  }
  for (int64_t rows : {1, 5, 16, 50, 333, 1000, 65536})
    for (int64_t cores = 1; cores <= 64; ++cores) {
      ASSERT_LE(forward_tiles(rows, true, cores).BT, 16);
      ASSERT_LE(forward_tiles(rows, false, cores).BT, 32);
      ASSERT_EQ(forward_tiles(rows, true, cores).BD, 32);
      ASSERT_EQ(forward_tiles(rows, false, cores).BD, 256);
    }
}

// Args with x [B, T, D] and, when `cu` is given, packed cu_seqlens.
Args grid_args(int64_t B, int64_t T, std::vector<int64_t> cu = {},
               at::ScalarType cu_dtype = at::kLong) {
  Args a;
  a.x = at::zeros({B, T, 32}, at::kDouble);
  a.weight = at::zeros({32, 4}, at::kDouble);
  if (!cu.empty()) a.cu_seqlens = at::tensor(cu, at::kLong).to(cu_dtype);
  return a;
}

void expect_chunk(const Chunk& c, int64_t n, int64_t i_t, int64_t bos, int64_t length,
                  int64_t i_tg) {
  EXPECT_EQ(c.n, n) << "chunk " << i_tg;
  EXPECT_EQ(c.i_t, i_t) << "chunk " << i_tg;
  EXPECT_EQ(c.bos, bos) << "chunk " << i_tg;
  EXPECT_EQ(c.length, length) << "chunk " << i_tg;
  EXPECT_EQ(c.i_tg, i_tg);
}

TEST(TilingTest, PackedChunkGridIsPerSequenceInOrder) {
  // lengths [3, 1, 5] with BT = 2: 2 + 1 + 3 chunks.
  for (auto cu_dtype : {at::kLong, at::kInt}) {
    const auto chunks = chunk_grid(grid_args(1, 9, {0, 3, 4, 9}, cu_dtype), 2);
    ASSERT_EQ(chunks.size(), 6u);
    expect_chunk(chunks[0], 0, 0, 0, 3, 0);
    expect_chunk(chunks[1], 0, 1, 0, 3, 1);
    expect_chunk(chunks[2], 1, 0, 3, 1, 2);
    expect_chunk(chunks[3], 2, 0, 4, 5, 3);
    expect_chunk(chunks[4], 2, 1, 4, 5, 4);
    expect_chunk(chunks[5], 2, 2, 4, 5, 5);
  }
}

TEST(TilingTest, PackedChunkGridGeneral) {
  const std::vector<int64_t> lengths{1, 7, 16, 17, 2, 33, 8};
  std::vector<int64_t> cu{0};
  for (int64_t L : lengths) cu.push_back(cu.back() + L);
  for (int64_t BT : {1, 2, 4, 8, 16, 32, 64}) {
    const auto chunks = chunk_grid(grid_args(1, cu.back(), cu), BT);
    size_t k = 0;
    for (size_t n = 0; n < lengths.size(); ++n)
      for (int64_t i_t = 0; i_t < cdiv(lengths[n], BT); ++i_t, ++k) {
        ASSERT_LT(k, chunks.size()) << "BT=" << BT;
        expect_chunk(chunks[k], static_cast<int64_t>(n), i_t, cu[n], lengths[n],
                     static_cast<int64_t>(k));
      }
    EXPECT_EQ(chunks.size(), k) << "BT=" << BT;
  }
}

TEST(TilingTest, DenseChunkGridIsBatchMajor) {
  // B = 3, T = 5, BT = 2: 3 chunks per batch row, bos = b * T.
  const auto chunks = chunk_grid(grid_args(3, 5), 2);
  ASSERT_EQ(chunks.size(), 9u);
  int64_t k = 0;
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t i_t = 0; i_t < 3; ++i_t, ++k) expect_chunk(chunks[k], b, i_t, b * 5, 5, k);

  const auto one = chunk_grid(grid_args(2, 4), 8);  // BT > T: one chunk per batch row
  ASSERT_EQ(one.size(), 2u);
  expect_chunk(one[0], 0, 0, 0, 4, 0);
  expect_chunk(one[1], 1, 0, 4, 4, 1);
}

}  // namespace
}  // namespace kprop::causal_conv1d
