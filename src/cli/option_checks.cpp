// Command-line value checks (option_checks.hpp).
#include "option_checks.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>

#include "linnet/syntax/file_reading.hpp"

namespace linnet::cli {

namespace {

// The whole of `text` as a decimal value of type T (an integer type, or
// double for any number), or nothing: no trailing characters, no empty text.
template <class T>
std::optional<T> parse_whole(const std::string& text) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [next, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || next != end || text.empty()) return std::nullopt;
  return value;
}

}  // namespace

CLI::Validator integer_from(int64_t min, int64_t max) {
  const std::string range = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [min, max, range](std::string& text) -> std::string {
        const std::optional<int64_t> value = parse_whole<int64_t>(text);
        if (!value || *value < min || *value > max) return "`" + text + "` is not " + range;
        return "";
      },
      "INT");
}

CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (!parse_whole<uint64_t>(text)) {
          return "`" + text + "` is not an integer from 0 to " +
                 std::to_string(std::numeric_limits<uint64_t>::max());
        }
        return "";
      },
      "SEED");
}

CLI::Validator not_empty() {
  return CLI::Validator(
      [](std::string& text) -> std::string { return text.empty() ? std::string("the value is empty (leave the option out for its default)") : ""; },
      "TEXT");
}

CLI::Validator number_value() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (!parse_whole<double>(text)) return "`" + text + "` is not a number";
        return "";
      },
      "NUMBER");
}

int check_temperature(double temperature) {
  if (temperature == 0) return 0;
  if (!std::isfinite(temperature) || temperature < kMinTemperature || temperature > kMaxTemperature) {
    std::cerr << "error: --temperature must be 0 (greedy) or a number from " << kMinTemperature << " to "
              << kMaxTemperature << "; got " << temperature << '\n';
    return 2;
  }
  return 0;
}

int check_tolerance(const std::string& flag, const std::optional<double>& value) {
  if (!value) return 0;
  if (!std::isfinite(*value) || *value < 0) {
    std::cerr << "error: " << flag << " must be a finite number, 0 or more; got " << *value << '\n';
    return 2;
  }
  return 0;
}

int check_loop_limit(const std::optional<int64_t>& limit) {
  if (limit && *limit < 1) {
    std::cerr << "error: --max-loop-iterations must be at least 1; got " << *limit << '\n';
    return 2;
  }
  return 0;
}

int check_output_path(const std::string& out) {
  namespace fs = std::filesystem;
  if (out.empty()) return 0;
  if (!out.ends_with(".npz") && !out.ends_with(".npy")) {
    std::cerr << "error: --out `" << out << "` must end in .npz (or .npy for a single output)\n";
    return 2;
  }
  std::error_code ec;
  // An existing path must be a regular file: a FIFO would block the
  // probe below until a reader came (forever), a device swallow the output.
  if (fs::exists(out, ec)) {
    if (const syntax::PathProblem problem = syntax::path_problem(out); problem.wrong_kind()) {
      std::cerr << "error: --out `" << out << "` " << syntax::path_problem_text(problem) << "\n";
      return 2;
    }
  }
  const fs::path parent = fs::path(out).parent_path();
  const std::string directory = parent.empty() ? "." : parent.string();
  if (!fs::is_directory(directory, ec)) {
    std::cerr << "error: --out `" << out << "`: the directory `" << directory << "` does not exist\n";
    return 2;
  }
  // Try it rather than ask access(): as root access() says yes to /proc and
  // /sys, and the write then failed only after the whole run. An existing
  // file is opened for writing without truncation; otherwise a probe file is
  // created in the directory and removed.
  bool writable = false;
  if (fs::exists(out, ec)) {
    const int descriptor = ::open(out.c_str(), O_WRONLY | O_CLOEXEC);
    writable = descriptor >= 0;
    if (writable) ::close(descriptor);
  } else {
    std::string probe = (fs::path(directory) / ".linnet-out-probe-XXXXXX").string();
    const int descriptor = ::mkstemp(probe.data());
    writable = descriptor >= 0;
    if (writable) {
      ::close(descriptor);
      ::unlink(probe.c_str());
    }
  }
  if (!writable) {
    std::cerr << "error: --out `" << out << "` is not writable\n";
    return 2;
  }
  return 0;
}

int check_weights_paths(const std::vector<std::string>& weights) {
  for (const std::string& path : weights) {
    const std::string problem =
        syntax::path_problem_text(syntax::path_problem(path, syntax::PathUse::FileOrDirectory));
    if (!problem.empty()) {
      std::cerr << "error: --weights `" << path << "` " << problem << "\n";
      return 2;
    }
  }
  return 0;
}

std::optional<std::vector<int32_t>> parse_token_list(const std::string& text) {
  std::vector<int32_t> tokens;
  const char* at = text.data();
  const char* end = text.data() + text.size();
  auto skip_spaces = [&] {
    while (at < end && *at == ' ') ++at;
  };
  skip_spaces();
  while (at < end) {
    int32_t token = 0;
    const auto [next, error] = std::from_chars(at, end, token);
    if (error != std::errc() || next == at || token < 0) return std::nullopt;
    tokens.push_back(token);
    at = next;
    skip_spaces();
    if (at < end && *at == ',') {
      ++at;
      skip_spaces();
      if (at == end) return std::nullopt;  // a trailing comma leaves an empty item
    }
  }
  return tokens;
}

}  // namespace linnet::cli
