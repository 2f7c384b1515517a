// Output summaries: shapes, ranges, top tokens.
#include "linnet/nest/summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <sys/resource.h>

#include "linnet/nest/session.hpp"
#include "linnet/tensor/half.hpp"

namespace linnet::nest {

namespace {

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

// "[0, 3]": the position of row `row` over the leading axes.
std::string row_position(const tensor::Shape& leading, int64_t row) {
  std::vector<int64_t> index(leading.size());
  for (size_t axis = leading.size(); axis-- > 0;) {
    index[axis] = leading[axis] == 0 ? 0 : row % leading[axis];
    row = leading[axis] == 0 ? 0 : row / leading[axis];
  }
  std::string text = "[";
  for (size_t axis = 0; axis < index.size(); ++axis) text += (axis ? ", " : "") + std::to_string(index[axis]);
  return text + "]";
}

// NaN last, then larger values first, then lower indices first.
bool ranks_before(double a, int64_t a_index, double b, int64_t b_index) {
  if (std::isnan(a) != std::isnan(b)) return !std::isnan(a);
  if (!std::isnan(a) && a != b) return a > b;
  return a_index < b_index;
}

// A result's rows as [rows, width] (width its last extent), read one row at
// a time: a whole copy of a prompt's logits in f64 is twice their f32 size
// (1.6 GB for 512 positions of a 201088-token vocabulary), so a summary
// never makes one.
tensor::Tensor as_rows(const tensor::Tensor& tensor, int64_t width) {
  return tensor.reshape({tensor.numel() / width, width});
}

// A row of a float tensor, each element widened to f64 (exact) into
// `out` (its size the row's length). A dense row of a float dtype is read
// in place, with no intermediate tensor; any other row through a copy.
void read_row(const tensor::Tensor& row, std::vector<double>& out) {
  const auto widen = [&](const auto* data, auto to_double) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = to_double(data[i]);
  };
  if (row.is_contiguous() && !row.unmade()) {
    switch (row.dtype()) {
      case tensor::DType::BF16:
        widen(static_cast<const uint16_t*>(row.raw_data()),
              [](uint16_t bits) { return double{tensor::bf16_bits_to_float(bits)}; });
        return;
      case tensor::DType::F16:
        widen(static_cast<const uint16_t*>(row.raw_data()),
              [](uint16_t bits) { return double{tensor::f16_bits_to_float(bits)}; });
        return;
      case tensor::DType::F32:
        widen(static_cast<const float*>(row.raw_data()), [](float v) { return double{v}; });
        return;
      case tensor::DType::F64:
        widen(static_cast<const double*>(row.raw_data()), [](double v) { return v; });
        return;
      default:
        break;
    }
  }
  out = row.to_vector<double>();
}

}  // namespace

std::vector<std::vector<RankedToken>> top_k_rows(const tensor::Tensor& tensor, int k) {
  std::vector<std::vector<RankedToken>> rows;
  if (tensor.rank() == 0) return rows;
  const int64_t width = tensor.extent(-1);
  if (width == 0) return rows;
  const tensor::Tensor table = as_rows(tensor, width);
  const int64_t count = table.extent(0);
  const int64_t keep = std::min<int64_t>(k, width);
  // One row's values and, for k > 1, its ranking: made once per call and
  // reused for every row. `generate` ranks the logits of every step (a
  // 201088-wide row for GPT-OSS), so this runs once per decoded token.
  std::vector<double> values(static_cast<size_t>(width));
  std::vector<int64_t> order(keep > 1 ? static_cast<size_t>(width) : 0);
  for (int64_t row = 0; row < count; ++row) {
    read_row(table.select(0, row), values);
    const double* data = values.data();
    std::vector<RankedToken> ranked;
    if (keep == 1) {
      // The best entry alone: one pass, no ranking of the others, in
      // ranks_before's order written as one comparison per entry (a
      // greater value, or the first number after NaNs; ties keep the
      // lower index), which is what a decode step's argmax over a
      // 201088-wide row can afford.
      int64_t best = 0;
      double best_value = data[0];
      for (int64_t i = 1; i < width; ++i) {
        const double value = data[i];
        if (value > best_value || (best_value != best_value && value == value)) {
          best = i;
          best_value = value;
        }
      }
      ranked.push_back({best, best_value});
    } else if (keep > 1) {
      std::iota(order.begin(), order.end(), int64_t{0});
      std::partial_sort(order.begin(), order.begin() + keep, order.end(),
                        [&](int64_t a, int64_t b) { return ranks_before(data[a], a, data[b], b); });
      for (int64_t i = 0; i < keep; ++i) ranked.push_back({order[i], data[order[i]]});
    }
    rows.push_back(std::move(ranked));
  }
  return rows;
}

std::vector<int64_t> argmax_rows(const tensor::Tensor& tensor) {
  std::vector<int64_t> tokens;
  for (const auto& row : top_k_rows(tensor, 1)) tokens.push_back(row.front().token);
  return tokens;
}

std::string describe_output(const std::string& name, const tensor::Tensor& tensor, const SummaryOptions& options) {
  std::string text = name + ": " + tensor.describe();
  const int64_t count = tensor.numel();
  if (count == 0) return text + " (empty)\n";
  if (tensor.rank() == 0) return text + " = " + tensor.item().to_string() + "\n";

  if (!tensor::is_float(tensor.dtype())) {
    const std::vector<int64_t> values = tensor.to_vector<int64_t>();
    text += "\n  ";
    const int64_t shown = std::min<int64_t>(count, options.max_values);
    for (int64_t i = 0; i < shown; ++i) text += (i ? " " : "") + std::to_string(values[i]);
    if (shown < count) text += " ... (" + std::to_string(count - shown) + " more)";
    return text + "\n";
  }

  double low = INFINITY, high = -INFINITY, total = 0;
  int64_t not_finite = 0;
  const int64_t width = tensor.extent(-1) > 0 ? tensor.extent(-1) : 1;
  const tensor::Tensor table = as_rows(tensor, width);
  std::vector<double> values;  // the first row, or the whole when it is printed in full
  for (int64_t row = 0; row < table.extent(0); ++row) {
    const std::vector<double> row_values = table.select(0, row).to_vector<double>();
    for (double value : row_values) {
      if (!std::isfinite(value)) {
        ++not_finite;
        continue;
      }
      low = std::min(low, value);
      high = std::max(high, value);
      total += value;
    }
    if (count <= options.max_values) values.insert(values.end(), row_values.begin(), row_values.end());
  }
  const int64_t finite = count - not_finite;
  if (finite > 0) {
    text += "  min " + number(low) + "  max " + number(high) + "  mean " + number(total / static_cast<double>(finite));
  }
  if (not_finite > 0) text += "  (" + std::to_string(not_finite) + " NaN or infinite)";
  text += "\n";
  if (count <= options.max_values) {
    // A small float result in full, as a small integer one is.
    text += "  ";
    for (int64_t i = 0; i < count; ++i) text += (i ? " " : "") + number(values[static_cast<size_t>(i)]);
    text += "\n";
  }

  const bool logits = options.vocab && tensor.extent(-1) == *options.vocab;
  if (!logits) return text;
  const std::vector<std::vector<RankedToken>> rows = top_k_rows(tensor, options.top_k);
  const tensor::Shape leading(tensor.shape().begin(), tensor.shape().end() - 1);
  // Many rows: the first and the last ones (the last position is the one
  // that predicts the next token).
  const int64_t total_rows = static_cast<int64_t>(rows.size());
  const int64_t head = total_rows <= options.max_rows ? total_rows : options.max_rows / 2;
  const int64_t tail_start = total_rows <= options.max_rows ? total_rows : total_rows - (options.max_rows - head);
  auto show = [&](int64_t row) {
    text += "  " + row_position(leading, row) + " top-" + std::to_string(options.top_k) + ":";
    for (const RankedToken& token : rows[row]) text += " " + std::to_string(token.token) + " (" + number(token.value) + ")";
    text += "\n";
  };
  for (int64_t row = 0; row < head; ++row) show(row);
  if (tail_start > head) text += "  ... " + std::to_string(tail_start - head) + " more rows\n";
  for (int64_t row = std::max(head, tail_start); row < total_rows; ++row) show(row);
  return text;
}

size_t peak_resident_bytes() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<size_t>(usage.ru_maxrss) * 1024;  // Linux reports kilobytes
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  int unit = 0;
  while (bytes >= 1000 && unit < 4) {
    bytes /= 1000;
    ++unit;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, unit == 0 ? "%.0f %s" : "%.3g %s", bytes, units[unit]);
  return buffer;
}

std::string describe_load(const Session& session) {
  const Card& card = session.card();
  std::string text;
  if (session.is_card()) {
    text = "card: " + card.name + (card.title.empty() ? "" : " (" + card.title + ")") + "\n";
    text += "model: " + session.root().qualified_name + eval::describe_bindings(session.instance_generics()) + "\n";
  } else {
    text = "program: " + session.options().program + "\n";
    if (session.root().block != nullptr) {
      text += "block: " + session.root().qualified_name + eval::describe_bindings(session.instance_generics()) + "\n";
    } else {
      text += "module: " + session.root().qualified_name + "\n";
    }
  }
  // Which policy ran: it decides where bf16 results are rounded (docs/ops.md).
  text += "numerics: " + std::string(eval::numerics_policy_name(session.options().numerics)) + "\n";
  if (!session.has_checkpoint()) return text;

  const Checkpoint& checkpoint = session.checkpoint();
  uint64_t total_bytes = 0;
  for (const auto& file : checkpoint.files()) total_bytes += file->file_size();
  text += "weights: " + session.weights_location().description + " (" + std::to_string(checkpoint.files().size()) +
          (checkpoint.files().size() == 1 ? " file, " : " files, ") + std::to_string(checkpoint.size()) +
          " tensors, " + format_bytes(static_cast<double>(total_bytes)) + ")\n";

  // The stored dtypes of the tensors the instance binds.
  std::map<std::string, size_t> stored;
  size_t bound = 0;
  for (const eval::ParameterInfo& info : session.manifest()) {
    if (info.kind == eval::ParameterKind::State) continue;
    if (const TensorRecord* record = checkpoint.find(session.bindings().tensor_for(info.path))) {
      ++stored[record->dtype ? std::string(tensor::dtype_name(*record->dtype)) : record->format_dtype];
      ++bound;
    }
  }
  std::string dtypes;
  for (const auto& [name, count] : stored) dtypes += (dtypes.empty() ? "" : ", ") + std::to_string(count) + " " + name;
  text += "  bound " + std::to_string(bound) + " tensors (stored as " + (dtypes.empty() ? "nothing" : dtypes) + ")";
  if (const auto& config = session.config(); config) {
    if (config->dtype) text += "; config dtype " + *config->dtype;
    if (config->rope_theta) text += ", rope theta " + number(*config->rope_theta);
    // Scaled rope (yarn, llama3, ...); "default" means none.
    if (config->rope_type && *config->rope_type != "default") {
      text += " (" + *config->rope_type + (config->rope_factor ? ", factor " + number(*config->rope_factor) : "") + ")";
    }
  }
  text += "\n";
  const LoadCounts& counts = session.load_counts();
  text += "  " + std::to_string(counts.borrowed) + " mapped without a copy (" +
          format_bytes(static_cast<double>(counts.borrowed_bytes));
  if (counts.left_mapped > 0) {
    text += "; " + std::to_string(counts.left_mapped) + " of them " +
            format_bytes(static_cast<double>(counts.left_mapped_bytes)) + " that --load " +
            std::string(weight_placement_name(session.weight_placement())) +
            " would copy, for want of free memory";
  }
  text += ")";
  if (counts.widened > 0) {
    text += ", " + std::to_string(counts.widened) +
            (session.options().cast_weights ? " cast to a copy (--cast-weights) (" : " widened to a copy (") +
            format_bytes(static_cast<double>(counts.widened_bytes)) + ")";
  }
  if (counts.widen_on_access > 0) {
    text += ", " + std::to_string(counts.widen_on_access) + " kept as stored and read as f32 (" +
            format_bytes(static_cast<double>(counts.widen_on_access_bytes)) + ")";
  }
  if (counts.placed > 0) {
    text += ", " + std::to_string(counts.placed) + " copied into memory (--load " +
            std::string(weight_placement_name(session.weight_placement())) + ") (" +
            format_bytes(static_cast<double>(counts.placed_bytes)) + ")";
  }
  if (counts.copied > 0) {
    text += ", " + std::to_string(counts.copied) + " copied for alignment (" +
            format_bytes(static_cast<double>(counts.copied_bytes)) + ")";
  }
  text += "\n";
  if (counts.split > 0) {
    // Across processes (shards.hpp): this process's part of each split tensor.
    text += "  process " + std::to_string(session.rank()) + " of " + std::to_string(session.processes()) +
            ": its part of " + std::to_string(counts.split) + " split tensors (" +
            format_bytes(static_cast<double>(counts.split_copied_bytes)) + " of them copied out of the mapping)\n";
  }
  if (const auto& unbound = session.unbound_tensors(); !unbound.empty()) {
    text += "  " + std::to_string(unbound.size()) + " checkpoint tensors not used (" + unbound.front() +
            (unbound.size() > 1 ? ", ..." : "") + ")\n";
  }
  for (const std::string& note : session.notes()) text += "  note: " + note + "\n";
  return text;
}

}  // namespace linnet::nest
