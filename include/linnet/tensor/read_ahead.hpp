// Asking the operating system to read a file-mapped range into its page
// cache ahead of use.
#pragma once

#include <cstddef>

namespace linnet::tensor {

// Reads the whole pages of [data, data + bytes), a range of a read-only
// file mapping (a borrowed checkpoint tensor), into the page cache on a
// background thread, the first time a range starting at `data` is asked
// for; later calls for it return at once. For tensors read a row at a
// time, whose rows would otherwise each wait on the disk when first read
// (an embedding table: a decode step's new token). Nothing is mapped, so
// resident memory does not grow; failures are ignored (it is a hint).
void read_ahead_in_background(const void* data, size_t bytes);

}  // namespace linnet::tensor
