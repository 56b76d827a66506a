// A stable, cache-friendly, parallel counting sort of entries by key into compressed arrays (pos,
// crd, values): the kernel behind COO→CSR builds and CSR↔CSC conversions.
//
// A plain counting sort scatters every entry to a random place in the output, so with a million
// keys each write misses the caches. Here, for many keys and entries, a first pass partitions the
// entries by the high bits of their key into at most 2^kPartitionBits buckets (few enough write
// streams to stay in L2), straight into the bucket's final range of the output, and a second
// pass permutes each range in place, small enough to stay in L2 too. Each pass streams through
// memory once; both split the work over threads.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "support/memory.h"

namespace sparseflow::format {

/// Up to this many keys the entries are scattered directly (every key's write stream stays in
/// cache), and also up to kDirectEntries entries (the whole output stays in cache).
inline constexpr int64_t kDirectKeys = 16384;
inline constexpr int64_t kDirectEntries = int64_t{1} << 19;
/// Otherwise the first pass uses at most 2^kPartitionBits buckets.
inline constexpr int kPartitionBits = 10;
/// Threads get at least this many entries each (a few milliseconds of work): below it, waking
/// threads costs more than it saves, and far more when other processes keep the cores busy.
inline constexpr int64_t kEntriesPerThread = int64_t{1} << 18;

/// Threads for sorting `n` entries: one per kEntriesPerThread, at most omp_get_max_threads().
inline int countingSortThreads(int64_t n) {
  return static_cast<int>(
      std::clamp<int64_t>(n / kEntriesPerThread, 1, std::max(1, omp_get_max_threads())));
}

/// Sorts `n` entries stably by key in [0, keys) into pos (keys + 1 offsets), crd and val (n each).
/// `scan(begin, end, f)` must call f(KeyT key, CrdT crd, V val) for the entries [begin, end) in
/// input order; it is called from several threads on disjoint ranges, twice per range, and every
/// key must lie in [0, keys). `keysDone(keyBegin, keyEnd)` runs once for every key in some range,
/// right after the entries of those keys are in place (so a caller can sort within keys while they
/// are in cache); calls come from several threads for disjoint ranges.
template <typename KeyT, typename PosT, typename CrdT, typename V, typename Scan, typename Done>
void countingSortByKey(int64_t n, int64_t keys, const Scan& scan, PosT* pos, CrdT* crd, V* val,
                       const Done& keysDone) {
  if (keys <= kDirectKeys || n <= kDirectEntries) {
    // One count per key and thread: with more keys than entries, threads would mostly count.
    const int threads = keys > n ? 1 : countingSortThreads(n);
    // counts[t * keys + k]: entries of key k in thread t's range, then where the next one goes.
    std::vector<int64_t> counts(static_cast<size_t>(threads) * static_cast<size_t>(keys), 0);
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      const int64_t begin = n * t / nt, end = n * (t + 1) / nt;
      int64_t* mine = counts.data() + static_cast<size_t>(t) * static_cast<size_t>(keys);
      scan(begin, end, [mine](KeyT k, CrdT, V) { ++mine[k]; });
#pragma omp barrier
#pragma omp single
      {
        int64_t running = 0;
        for (int64_t k = 0; k < keys; ++k) {
          pos[k] = static_cast<PosT>(running);
          for (int u = 0; u < nt; ++u) {
            int64_t& slot =
                counts[static_cast<size_t>(u) * static_cast<size_t>(keys) + static_cast<size_t>(k)];
            const int64_t count = slot;
            slot = running;
            running += count;
          }
        }
        pos[keys] = static_cast<PosT>(running);
      }
      scan(begin, end, [mine, crd, val](KeyT k, CrdT c, V v) {
        const int64_t at = mine[k]++;
        crd[at] = c;
        val[at] = v;
      });
#pragma omp barrier
      constexpr int64_t kChunk = 256;
#pragma omp for schedule(dynamic, 1)
      for (int64_t k = 0; k < keys; k += kChunk) keysDone(k, std::min(keys, k + kChunk));
    }
    return;
  }

  const int threads = countingSortThreads(n);
  // Buckets: enough that one bucket's entries (about n / buckets) fill half of L2, no more than
  // 2^kPartitionBits write streams, and keys split into power-of-two ranges.
  constexpr int64_t kBucketBytes = int64_t{1} << 19;
  const int64_t entryBytes = static_cast<int64_t>(sizeof(KeyT) + sizeof(CrdT) + sizeof(V));
  int64_t wanted = 1;
  while (wanted < (int64_t{1} << kPartitionBits) && wanted * kBucketBytes < n * entryBytes) {
    wanted *= 2;
  }
  int shift = 0;
  while (((keys - 1) >> shift) >= wanted) ++shift;
  const int64_t width = int64_t{1} << shift;
  const int64_t buckets = (keys + width - 1) >> shift;
  // The first pass leaves each bucket's entries in the bucket's final output range, in crd and
  // val themselves, with their keys beside them; the second permutes each range in place.
  PageArray<KeyT> keyOf(n, "a sort buffer");
  KeyT* kOf = keyOf.data();
  std::vector<int64_t> counts(static_cast<size_t>(threads) * static_cast<size_t>(buckets), 0);
  std::vector<int64_t> bucketStart(static_cast<size_t>(buckets + 1), 0);
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t begin = n * t / nt, end = n * (t + 1) / nt;
    int64_t* mine = counts.data() + static_cast<size_t>(t) * static_cast<size_t>(buckets);
    scan(begin, end, [mine, shift](KeyT k, CrdT, V) { ++mine[k >> shift]; });
#pragma omp barrier
#pragma omp single
    {
      int64_t running = 0;
      for (int64_t b = 0; b < buckets; ++b) {
        bucketStart[static_cast<size_t>(b)] = running;
        for (int u = 0; u < nt; ++u) {
          int64_t& slot = counts[static_cast<size_t>(u) * static_cast<size_t>(buckets) +
                                 static_cast<size_t>(b)];
          const int64_t count = slot;
          slot = running;
          running += count;
        }
      }
      bucketStart[static_cast<size_t>(buckets)] = running;
      // Every bucket's first position now, so that a bucket's keysDone can read the end of its
      // last key (the next bucket's first) while another thread is still filling that bucket.
      for (int64_t b = 0; b < buckets; ++b) {
        pos[b << shift] = static_cast<PosT>(bucketStart[static_cast<size_t>(b)]);
      }
      pos[keys] = static_cast<PosT>(running);
    }
    scan(begin, end, [mine, shift, kOf, crd, val](KeyT k, CrdT c, V v) {
      const int64_t at = mine[k >> shift]++;
      kOf[at] = k;
      crd[at] = c;
      val[at] = v;
    });
#pragma omp barrier
    std::vector<int64_t> next(static_cast<size_t>(width));
    std::vector<CrdT> crdCopy;
    std::vector<V> valCopy;
#pragma omp for schedule(dynamic, 1)
    for (int64_t b = 0; b < buckets; ++b) {
      const int64_t firstKey = b << shift, lastKey = std::min(keys, firstKey + width);
      const int64_t from = bucketStart[static_cast<size_t>(b)];
      const int64_t to = bucketStart[static_cast<size_t>(b + 1)];
      std::fill(next.begin(), next.begin() + (lastKey - firstKey), 0);
      for (int64_t i = from; i < to; ++i) {
        ++next[static_cast<size_t>(static_cast<int64_t>(kOf[i]) - firstKey)];
      }
      int64_t running = from;
      for (int64_t j = 0; j < lastKey - firstKey; ++j) {
        if (j > 0) pos[firstKey + j] = static_cast<PosT>(running);
        const int64_t count = next[static_cast<size_t>(j)];
        next[static_cast<size_t>(j)] = running;
        running += count;
      }
      crdCopy.assign(crd + from, crd + to);
      valCopy.assign(val + from, val + to);
      for (int64_t i = from; i < to; ++i) {
        const int64_t at = next[static_cast<size_t>(static_cast<int64_t>(kOf[i]) - firstKey)]++;
        crd[at] = crdCopy[static_cast<size_t>(i - from)];
        val[at] = valCopy[static_cast<size_t>(i - from)];
      }
      keysDone(firstKey, lastKey);
    }
  }
}

}  // namespace sparseflow::format
