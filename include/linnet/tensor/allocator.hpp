// Accounting of the memory tensors own. Every owned Storage adds its bytes to
// a process-wide counter when it is allocated and removes them when it is
// freed; the peak is the high-water mark since the last reset. Borrowed
// storage (a memory-mapped checkpoint) is not counted. Thread-safe.
#pragma once

#include <cstddef>

namespace linnet::tensor {

struct MemoryStats {
  size_t current_bytes = 0;  // owned tensor memory alive now
  size_t peak_bytes = 0;     // the most that was alive at once since the last reset
  size_t allocations = 0;    // owned allocations made since the process started
};

MemoryStats memory_stats();
size_t current_bytes();
size_t peak_bytes();
// Starts a new measurement: the peak becomes the current figure.
void reset_peak_bytes();

// Asks the C library's allocator (glibc; elsewhere nothing is done) to
// keep freed memory below 32 MiB in the process for the next allocation
// instead of handing it back to the kernel, whose fresh pages then cost a
// page fault and a zeroing each on first touch. Blocks of 4 MiB and more
// have their own cache (storage.cpp); this covers the smaller results an
// op makes and frees layer after layer. Called once, at the start of the
// command line tool.
void keep_freed_heap_memory();

}  // namespace linnet::tensor
