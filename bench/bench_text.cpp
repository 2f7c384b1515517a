// Tokenizer speed: for a tokenizer.json and a text file, the time to load
// the tokenizer, to encode the text (best of 3) and to decode the ids, as
// seconds and MB/s. scripts/bench_text runs it on the fetched tokenizers
// and compares with Hugging Face's Rust `tokenizers` on the same text.
//   bench_text TOKENIZER_JSON TEXT_FILE
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "linnet/text/tokenizer.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: bench_text TOKENIZER_JSON TEXT_FILE\n");
    return 2;
  }
  std::ifstream in(argv[2], std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  const double megabytes = static_cast<double>(text.size()) / 1e6;

  auto start = std::chrono::steady_clock::now();
  const linnet::text::Tokenizer tokenizer = linnet::text::Tokenizer::from_file(argv[1]);
  const double load = seconds_since(start);

  double best = 1e30;
  std::vector<int32_t> ids;
  for (int round = 0; round < 3; ++round) {
    // A fresh tokenizer's word cache would flatter no one: each round reuses
    // it, as a long-running caller would; round 1 is the cold figure.
    start = std::chrono::steady_clock::now();
    ids = tokenizer.encode(text, false);
    const double took = seconds_since(start);
    if (round == 0) std::printf("encode (cold cache): %.3f s\n", took);
    best = std::min(best, took);
  }
  start = std::chrono::steady_clock::now();
  const std::string decoded = tokenizer.decode(ids);
  const double decode = seconds_since(start);
  std::printf("load: %.3f s\nencode: %.3f s for %.2f MB (%.1f MB/s), %zu tokens\ndecode: %.3f s (%.1f MB/s), round trip %s\n",
              load, best, megabytes, megabytes / best, ids.size(), decode, megabytes / decode,
              decoded == text ? "exact" : "differs (normalizer)");
  return 0;
}
