// Advice about file-mapped ranges (linnet/tensor/mapped_pages.hpp).
#include "linnet/tensor/mapped_pages.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>
#include <utility>

namespace linnet::tensor {

namespace {

// One MADV_WILLNEED reads at most the device's readahead window (Linux
// caps it at max(read_ahead_kb, max_sectors_kb), often 128 KiB), so a
// whole range is asked for a window at a time.
constexpr uintptr_t kChunkBytes = uintptr_t{128} * 1024;

constexpr uintptr_t kHugePageBytes = uintptr_t{2} << 20;

// The range starts already advised, per kind of advice. Never destroyed: a
// background thread may still be reading at exit.
std::mutex advised_mutex;
bool first_time(std::set<const void*>& (*advised)(), const void* data) {
  std::lock_guard lock(advised_mutex);
  return advised().insert(data).second;
}
std::set<const void*>& read_ahead_starts() {
  static auto* starts = new std::set<const void*>;
  return *starts;
}
std::set<const void*>& huge_page_starts() {
  static auto* starts = new std::set<const void*>;
  return *starts;
}

// The `unit`-aligned units wholly inside [data, data + bytes): a unit only
// partly the range's could reach past the file's mapping into memory that
// is not ours, or drop pages a neighbouring tensor still reads.
std::pair<uintptr_t, uintptr_t> whole_units(const void* data, size_t bytes, uintptr_t unit) {
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + unit - 1) / unit * unit;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) / unit * unit;
  return {begin, end};
}

uintptr_t page_bytes() {
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

}  // namespace

void prefer_huge_pages(const void* data, size_t bytes) {
#ifdef MADV_HUGEPAGE
  if (!first_time(huge_page_starts, data)) return;
  const auto [begin, end] = whole_units(data, bytes, kHugePageBytes);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data, (void)bytes;
#endif
}

void populate_mapped_pages(const void* data, size_t bytes) {
#ifdef MADV_POPULATE_READ
  // Outward to whole pages: the range's first and last pages are the
  // mapping's too, and reading them is harmless.
  const uintptr_t page = page_bytes();
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes + page - 1) / page * page;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_READ);
#else
  (void)data, (void)bytes;
#endif
}

void release_mapped_pages(const void* data, size_t bytes) {
  const auto [begin, end] = whole_units(data, bytes, page_bytes());
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

void read_ahead_in_background(const void* data, size_t bytes) {
  if (!first_time(read_ahead_starts, data)) return;
  const auto [begin, end] = whole_units(data, bytes, page_bytes());
  if (end <= begin) return;
  try {
    std::thread([begin, end] {
      for (uintptr_t at = begin; at < end; at += kChunkBytes) {
        const uintptr_t length = end - at < kChunkBytes ? end - at : kChunkBytes;
        ::madvise(reinterpret_cast<void*>(at), length, MADV_WILLNEED);
      }
    }).detach();
  } catch (const std::system_error&) {
    // No thread to spare: the rows are read when first used, as without it.
  }
}

}  // namespace linnet::tensor
