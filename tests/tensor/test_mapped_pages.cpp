// read_ahead_in_background: a mapped file range whose pages are not in the
// page cache is read into it without being touched by the caller.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "../temp_dir.hpp"
#include "linnet/tensor/mapped_pages.hpp"

namespace {

// How many of the pages of [data, data + bytes) (page-aligned) are resident.
size_t resident_pages(const void* data, size_t bytes) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> flags((bytes + page - 1) / page);
  if (::mincore(const_cast<void*>(data), bytes, flags.data()) != 0) return 0;
  size_t count = 0;
  for (unsigned char flag : flags) count += flag & 1;
  return count;
}

}  // namespace

TEST_CASE("a mapped range is read into the page cache in the background", "[read_ahead]") {
  linnet_test::TempDir dir("linnet-read-ahead");
  const std::string path = (dir.path() / "table.bin").string();
  constexpr size_t kBytes = size_t{8} << 20;
  {
    std::ofstream out(path, std::ios::binary);
    const std::vector<char> block(1 << 20, 'x');
    for (size_t written = 0; written < kBytes; written += block.size()) out.write(block.data(), block.size());
  }
  const int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  ::fsync(fd);  // clean pages can be dropped
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  void* mapped = ::mmap(nullptr, kBytes, PROT_READ, MAP_PRIVATE, fd, 0);
  REQUIRE(mapped != MAP_FAILED);
  const size_t pages = kBytes / static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  // Where the file system keeps the pages anyway (tmpfs), there is nothing
  // to read and nothing to check.
  if (resident_pages(mapped, kBytes) < pages) {
    linnet::tensor::read_ahead_in_background(mapped, kBytes);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (resident_pages(mapped, kBytes) < pages && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    CHECK(resident_pages(mapped, kBytes) == pages);
    // Asked again: returns at once, nothing to do.
    linnet::tensor::read_ahead_in_background(mapped, kBytes);
  }
  ::munmap(mapped, kBytes);
  ::close(fd);
}
