// The direct n:m paths: compress (dense n:m → values + packed meta), decompress, and sparsify
// (prune + compress + impact in one pass over the input).
#include <vector>

#include "nm/nm_kernels.h"
#include "nm/sse2_groups.h"
#include "sparseflow/nm.h"
#include "support/check.h"

namespace sparseflow::nm {
namespace {

using detail::DenseMatrix;
using detail::ImpactLanes;
using detail::ImpactSums;
using detail::MetaWriter;

int64_t ceilDiv(int64_t a, int64_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

/// Sizes of the n:m storage of a rows x cols matrix.
struct Layout {
  int64_t rows = 0, cols = 0, groups = 0, slotsPerRow = 0;
  int32_t bits = 0;
  int64_t rowBits = 0, totalBits = 0;  ///< metadata bits per row and in all
  Layout(int64_t r, int64_t c, NMPattern p)
      : rows(r),
        cols(c),
        groups(ceilDiv(c, p.m)),
        slotsPerRow(groups * p.n),
        bits(detail::metaBits(p.m)) {
    // The shape is the caller's: the bit counts below must not wrap (the slot counts fit then).
    // A matrix without rows stores nothing, however wide.
    const bool wraps = __builtin_mul_overflow(slotsPerRow, int64_t{bits}, &rowBits) ||
                       __builtin_mul_overflow(rows, rowBits, &totalBits);
    SF_CHECK_CODE(rows == 0 || !wraps, ErrorCode::kOutOfMemory)
        << "a " << rows << "x" << cols << " " << p.toString()
        << " matrix needs more than 2^63 bits of n:m metadata";
    if (wraps) rowBits = 0;
  }
  int64_t slots() const { return rows * slotsPerRow; }
  int64_t metaBytes() const { return ceilDiv(totalBits, 8); }
  /// Rows per parallel chunk, so that every chunk's meta starts on a byte.
  int64_t chunkRows() const { return detail::chunkRowsFor(cols, detail::byteAlignedRows(rowBits)); }
};

/// What the row kernel does with each group.
enum class Mode {
  kCompress,  ///< the input is n:m already: a group with more than n nonzeros is a failure
  kSparsify,  ///< keep the n largest magnitudes, sum the impact; NaN/Inf is a failure
};

#ifdef SPARSEFLOW_NM_SSE2
/// The whole blocks of four groups (4 kM columns) of a row with SSE2. xf is the row as f32 (a
/// widened copy for f16/bf16), x as stored. kN is n when known at compile time (m = 4), else 0.
/// Stores the blocks' slots and, when sparsifying, their impact sums into `lanes` (zero before).
/// Returns the number of columns done; `ok` becomes false on a failure among them.
template <Mode kMode, int kM, int kN, typename Storage>
int64_t sse2Prefix(const float* xf, const Storage* x, int64_t cols, int runtimeN, int bits,
                   Storage*& values, MetaWriter& meta, ImpactLanes& lanes, bool& ok) {
  namespace sse2 = detail::sse2;
  const int n = kN ? kN : runtimeN;
  sse2::ImpactAccumulator sums;
  __m128i failed = _mm_setzero_si128();
  Storage* out = values;
  const int64_t end = cols / (4 * kM) * (4 * kM);
  for (int64_t c = 0; c < end; c += 4 * kM) {
    sse2::Block<kM> q;
    if constexpr (kMode == Mode::kSparsify) {
      q = sse2::selectBlock<kM>(xf + c, n, failed);
      for (int v = 0; v < kM; ++v) sums.add(q.values[v], q.stays[v]);
    } else {
      q = sse2::nonzeroBlock<kM>(xf + c, n, failed);
    }
    if constexpr (kM == 4) {
      out = sse2::emitBlock4<kN>(q, x + c, out, meta);
    } else {
      out = sse2::emitBlock<kM>(q, x + c, n, bits, out, meta);
    }
  }
  values = out;
  if constexpr (kMode == Mode::kSparsify) sums.storeTo(lanes);
  ok = _mm_movemask_epi8(failed) == 0;
  return end;
}

/// sse2Prefix with n fixed at compile time for groups of 4.
template <Mode kMode, int kM, typename Storage>
int64_t sse2PrefixFor(const float* xf, const Storage* x, int64_t cols, int n, int bits,
                      Storage*& values, MetaWriter& meta, ImpactLanes& lanes, bool& ok) {
  if constexpr (kM == 4) {
    switch (n) {
      case 1: return sse2Prefix<kMode, 4, 1>(xf, x, cols, n, bits, values, meta, lanes, ok);
      case 2: return sse2Prefix<kMode, 4, 2>(xf, x, cols, n, bits, values, meta, lanes, ok);
      default: return sse2Prefix<kMode, 4, 3>(xf, x, cols, n, bits, values, meta, lanes, ok);
    }
  } else {
    return sse2Prefix<kMode, kM, 0>(xf, x, cols, n, bits, values, meta, lanes, ok);
  }
}
#endif

/// Compresses rows [begin, end) into `values` and `meta` (both positioned at row `begin`).
/// Returns the row-major index of the first failure (kCompress: the first element of the group;
/// kSparsify: the NaN/Inf), or -1.
template <typename Tr, int kM, Mode kMode>
int64_t compressRows(const typename Tr::Storage* in, const Layout& layout, NMPattern pattern,
                     int64_t begin, int64_t end, typename Tr::Storage* values, MetaWriter meta,
                     double scale, ImpactSums* rowSums) {
  using Storage = typename Tr::Storage;
  const int m = kM ? kM : pattern.m, n = pattern.n, bits = layout.bits;
  const int64_t cols = layout.cols;
  typename Tr::Bits mag[kM ? kM : kMaxGroupSize];
  ImpactLanes lanes;
  // Compresses the g elements of the group at column c0; returns false on a failure there.
  auto group = [&](const Storage* x, int64_t c0, int g) __attribute__((always_inline)) {
    int nonzeros = 0;
    bool bad = false;
    uint64_t nonzero = 0;
    for (int i = 0; i < g; ++i) {
      mag[i] = Tr::magnitude(x[i]);
      nonzero |= static_cast<uint64_t>(mag[i] != 0) << i;
      nonzeros += mag[i] != 0;
      if constexpr (kMode == Mode::kSparsify) bad |= Tr::nonFiniteMagnitude(mag[i]);
    }
    uint64_t stored = nonzero;  // nonzeros that stay
    if constexpr (kMode == Mode::kSparsify) {
      stored &= detail::largestMask(mag, g, n);
      nonzeros = 0;
      for (int i = 0; i < g; ++i) {
        const bool stays = (stored >> i) & 1;
        nonzeros += stays;
        // Lane = column % 4; m is a multiple of 4 for the common patterns.
        const int lane = kM % 4 == 0 && kM > 0 ? (i & 3) : static_cast<int>((c0 + i) & 3);
        lanes.addPruned(lane, detail::impactValue<Tr>(x[i], scale), stays);
      }
    } else {
      bad = nonzeros > n;
    }
    // n slots: the stored nonzeros at their offsets, padding (zero) at the smallest unused ones.
    uint64_t slots = detail::slotMask(stored, nonzeros, n);
    for (int k = 0; k < n; ++k) {
      const int off = std::countr_zero(slots);
      slots &= slots - 1;
      const Storage v = x[off < g ? off : 0];
      *values++ = (stored >> off) & 1 ? v : Storage{};
      meta.put(static_cast<uint32_t>(off), bits);
    }
    return !bad;
  };
#ifdef SPARSEFLOW_NM_SSE2
  std::vector<float> widened(detail::kWidensToF32<Tr, kM> ? static_cast<size_t>(cols) : 0);
#endif
  for (int64_t r = begin; r < end; ++r) {
    const Storage* x = in + r * cols;
    bool ok = true;
    int64_t c = 0;
#ifdef SPARSEFLOW_NM_SSE2
    if constexpr (detail::kUsesSse2<Tr, kM>) {
      const float* xf = detail::rowAsF32<Tr>(x, widened.data(), cols);
      c = sse2PrefixFor<kMode, kM>(xf, x, cols, n, bits, values, meta, lanes, ok);
    }
#endif
    for (; c + m <= cols; c += m) ok &= group(x + c, c, m);
    if (c < cols) ok &= group(x + c, c, static_cast<int>(cols - c));
    if (!ok) {
      for (c = 0; c < cols; c += m) {
        int64_t nonzeros = 0;
        for (int64_t i = c; i < std::min(cols, c + m); ++i) {
          if (kMode == Mode::kSparsify && Tr::nonFinite(x[i])) return r * cols + i;
          nonzeros += Tr::magnitude(x[i]) != 0;
        }
        if (kMode == Mode::kCompress && nonzeros > n) return r * cols + c;
      }
    }
    if constexpr (kMode == Mode::kSparsify) {
      rowSums[r] = lanes.sum();
      lanes = {};
    }
  }
  meta.flush();
  return -1;
}

/// The n:m tensor of a dense matrix (kCompress) or of its pruned version (kSparsify, which also
/// fills `impact`). Throws for a failure, naming its row and column.
template <Mode kMode>
Tensor compressMatrix(const DenseMatrix& matrix, NMPattern pattern, Impact* impact) {
  const char* what = kMode == Mode::kCompress ? "nm::compress" : "nm::sparsify";
  const Layout layout(matrix.rows, matrix.cols, pattern);
  const DType dtype = matrix.tensor.dtype();
  Buffer values = Buffer::zeros(dtype, layout.slots());
  Buffer meta = Buffer::zeros(DType::kU8, layout.metaBytes());
  const int64_t failure = detail::dispatchDType(dtype, [&](auto traits) {
    using Tr = decltype(traits);
    using Storage = typename Tr::Storage;
    const auto* in = static_cast<const Storage*>(matrix.data());
    auto* out = values.as<Storage>();
    auto* metaOut = meta.as<uint8_t>();
    const bool empty = matrix.rows == 0 || matrix.cols == 0;  // no rows are visited then
    std::vector<ImpactSums> rowSums(
        kMode == Mode::kSparsify && !empty ? static_cast<size_t>(matrix.rows) : 0);
    const double scale = kMode == Mode::kSparsify ? detail::impactScale(matrix) : 1.0;
    const int64_t result = detail::dispatchGroupSize(pattern.m, [&](auto groupSize) {
      constexpr int kM = decltype(groupSize)::value;
      return detail::forEachChunk(
          layout.rows, layout.chunkRows(), layout.rows * layout.cols,
          [&](int64_t begin, int64_t end) {
            return compressRows<Tr, kM, kMode>(
                in, layout, pattern, begin, end, out + begin * layout.slotsPerRow,
                MetaWriter(metaOut + begin * layout.slotsPerRow * layout.bits / 8), scale,
                rowSums.data());
          });
    });
    if (kMode == Mode::kSparsify && result < 0) {
      // Rows summed in order: the same numbers for any thread count, and as measureImpact.
      ImpactSums total;
      for (const auto& row : rowSums) total.merge(row);
      *impact = detail::finishImpact(total, layout.rows * layout.cols, scale);
    }
    return result;
  });
  if (kMode == Mode::kCompress) {
    SF_USER_CHECK(failure < 0) << what << ": " << detail::describeBadGroup(matrix, pattern, failure)
                               << " (prune it first with nm::prune)";
  } else {
    SF_USER_CHECK(failure < 0) << what << ": the matrix holds "
                               << detail::describeNonFinite(matrix, failure) << " at "
                               << detail::describeElement(failure, matrix.cols)
                               << "; magnitude pruning needs finite values";
  }
  std::vector<LevelStorage> levels(2);
  levels[1].meta = std::move(meta);
  return Tensor({matrix.rows, matrix.cols}, dtype, Format::parse(pattern.toString(), 2),
                std::move(levels), std::move(values));
}

/// Expands rows [begin, end) of an n:m tensor into `out`; returns the index of the first slot
/// whose offset is out of order or out of range, or -1.
template <typename Storage>
int64_t decompressRows(const Storage* values, const uint8_t* meta, const Layout& layout,
                       NMPattern pattern, int64_t begin, int64_t end, Storage* out) {
  const int64_t cols = layout.cols, n = pattern.n, m = pattern.m;
  const uint32_t mask = (1u << layout.bits) - 1;
  for (int64_t r = begin; r < end; ++r) {
    Storage* y = out + r * cols;
    for (int64_t g = 0; g < layout.groups; ++g) {
      int64_t previous = -1;
      for (int64_t s = 0; s < n; ++s) {
        const int64_t slot = r * layout.slotsPerRow + g * n + s;
        const int64_t bit = slot * layout.bits;
        const int64_t off = (meta[bit >> 3] >> (bit & 7)) & mask;
        if (off <= previous || off >= m) return slot;
        previous = off;
        const int64_t c = g * m + off;
        if (c < cols) y[c] = values[slot];
      }
    }
  }
  return -1;
}

}  // namespace

Tensor compress(const Tensor& denseNM, NMPattern pattern) {
  detail::checkPattern(pattern, "nm::compress");
  return compressMatrix<Mode::kCompress>(detail::denseMatrix(denseNM, "nm::compress"), pattern,
                                         nullptr);
}

Sparsified sparsify(const Tensor& dense, NMPattern pattern) {
  detail::checkPattern(pattern, "nm::sparsify");
  Sparsified result;
  result.compressed = compressMatrix<Mode::kSparsify>(detail::denseMatrix(dense, "nm::sparsify"),
                                                      pattern, &result.impact);
  return result;
}

Tensor decompress(const Tensor& nmTensor) {
  const NMPattern pattern = patternOf(nmTensor);
  const Layout layout(nmTensor.shape()[0], nmTensor.shape()[1], pattern);
  const Buffer& meta = nmTensor.level(1).meta;
  SF_CHECK_CODE(nmTensor.values().size() == layout.slots(), ErrorCode::kInvalidFormat)
      << "nm::decompress: values has " << nmTensor.values().size() << " entries, a "
      << pattern.toString() << " " << layout.rows << "x" << layout.cols << " matrix stores "
      << layout.slots();
  SF_CHECK_CODE(meta.dtype() == DType::kU8 && meta.size() == layout.metaBytes(),
                ErrorCode::kInvalidFormat)
      << "nm::decompress: meta has " << meta.size() << " " << dtypeName(meta.dtype())
      << " entries, expected " << layout.metaBytes() << " u8";
  Tensor result = detail::zeroMatrix(nmTensor.dtype(), layout.rows, layout.cols);
  const int64_t failure = detail::dispatchDType(nmTensor.dtype(), [&](auto traits) {
    using Storage = typename decltype(traits)::Storage;
    const auto* values = nmTensor.values().as<Storage>();
    auto* out = result.mutableValues().as<Storage>();
    return detail::forEachChunk(layout.rows, detail::chunkRowsFor(layout.cols, 1),
                                layout.rows * layout.cols, [&](int64_t begin, int64_t end) {
                                  return decompressRows(values, meta.as<uint8_t>(), layout, pattern,
                                                        begin, end, out);
                                });
  });
  SF_CHECK_CODE(failure < 0, ErrorCode::kInvalidFormat)
      << "nm::decompress: row " << failure / layout.slotsPerRow << ", group "
      << failure % layout.slotsPerRow / pattern.n << ": slot " << failure % pattern.n
      << " has an offset out of order or not below m = " << pattern.m;
  return result;
}

}  // namespace sparseflow::nm
