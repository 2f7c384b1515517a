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

}  // namespace linnet::tensor
