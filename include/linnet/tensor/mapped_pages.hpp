// Advice to the operating system about file-mapped ranges (borrowed
// checkpoint tensors): read them ahead of use, map them in huge pages.
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

// Asks for the whole 2 MiB units inside [data, data + bytes) to be cached
// and mapped in 2 MiB pages (MADV_HUGEPAGE), once per range start, for
// weights a product reads whole. A 4 KiB mapping costs a page-table walk
// every 4 KiB of a streamed weight, and on the development VM a page not
// read for a few hundred milliseconds loses its translation: a prompt
// call's one-row output head (1.16 GB for GPT-OSS) took 57-70 ms through 4
// KiB pages and 18-30 ms through 2 MiB ones (docs/performance.md). The
// hint applies to pages read into the page cache through the mapping
// afterwards; failure is harmless. Not for tables read a row at a time: a
// row would map its whole 2 MiB.
void prefer_huge_pages(const void* data, size_t bytes);

// Maps the pages of [data, data + bytes) in one call (MADV_POPULATE_READ,
// reading from the file what is not cached) before a copy reads them all,
// so the copy does not take a page fault every few pages. A hint: where
// the kernel lacks it, the copy faults them in as it goes.
void populate_mapped_pages(const void* data, size_t bytes);

// Tells the kernel that the whole pages inside [data, data + bytes) will
// not be read again (a tensor copied or widened out of the mapping), so
// that the stored form does not also stay resident. The mapping is private
// and read-only: dropping its clean pages loses nothing (a later read
// faults them back in from the file).
void release_mapped_pages(const void* data, size_t bytes);

}  // namespace linnet::tensor
