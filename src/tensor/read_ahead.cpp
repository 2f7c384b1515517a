// read_ahead_in_background (linnet/tensor/read_ahead.hpp).
#include "linnet/tensor/read_ahead.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>

namespace linnet::tensor {

namespace {

// One MADV_WILLNEED reads at most the device's readahead window (Linux
// caps it at max(read_ahead_kb, max_sectors_kb), often 128 KiB), so a
// whole range is asked for a window at a time.
constexpr uintptr_t kChunkBytes = uintptr_t{128} * 1024;

std::mutex requested_mutex;
// Never destroyed: a background thread may still be reading at exit.
std::set<const void*>& requested() {
  static auto* starts = new std::set<const void*>;
  return *starts;
}

}  // namespace

void read_ahead_in_background(const void* data, size_t bytes) {
  {
    std::lock_guard lock(requested_mutex);
    if (!requested().insert(data).second) return;
  }
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) / page * page;
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
