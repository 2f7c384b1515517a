// Bracket balance of a whole file, checked before parsing (delimiters.hpp).
//
// A missing or extra brace makes every later declaration parse wrongly, and
// the parser only notices at the end of the file, far from the mistake. So,
// as rustc does, the brackets are matched first, on the tokens alone, and an
// imbalance is reported where it most likely is. The clue is indentation:
// a `}` that starts its line is written at the indentation of the line that
// opened its block. A pair whose closing `}` is indented differently from its
// opening line is where the count went wrong: the extra `}` (which closed the
// block early) or the `}` taken from an outer block (which left an inner
// block open).
#include "delimiters.hpp"

#include <algorithm>
#include <optional>
#include <string>

namespace linnet::syntax::detail {

namespace {

using K = TokenKind;

bool is_open(K kind) { return kind == K::LParen || kind == K::LBracket || kind == K::LBrace; }
bool is_close(K kind) { return kind == K::RParen || kind == K::RBracket || kind == K::RBrace; }

K closer_of(K open) {
  switch (open) {
    case K::LParen: return K::RParen;
    case K::LBracket: return K::RBracket;
    default: return K::RBrace;
  }
}

std::string spelled(const Token& token) { return "`" + std::string(token.text) + "`"; }

// The brackets of one file, with the indentation clues.
class Matcher {
 public:
  Matcher(const std::vector<Token>& tokens, const SourceFile& file, Diagnostics& diagnostics)
      : tokens_(tokens), file_(file), diagnostics_(diagnostics) {}

  bool run() {
    index_lines();
    for (std::size_t i = 0; i < tokens_.size(); ++i) {
      const K kind = tokens_[i].kind;
      if (is_open(kind)) {
        open_.push_back(i);
      } else if (is_close(kind)) {
        if (!close(i)) return false;
      }
    }
    if (open_.empty()) return true;
    report_unclosed(open_.back(), std::nullopt);
    return false;
  }

 private:
  struct Pair {
    std::size_t open;
    std::size_t close;
  };

  // Matches the closing bracket at `index`; false once a problem is reported.
  bool close(std::size_t index) {
    const K kind = tokens_[index].kind;
    if (open_.empty()) {
      report_stray(index);
      return false;
    }
    const std::size_t top = open_.back();
    if (closer_of(tokens_[top].kind) == kind) {
      open_.pop_back();
      if (indented_differently(top, index)) suspicious_.push_back({top, index});
      closed_.push_back({top, index});
      return true;
    }
    // `(x + 1 }`: the `(` is never closed when an outer bracket matches the
    // `}`; otherwise the `}` itself is stray.
    for (std::size_t depth = open_.size(); depth-- > 0;) {
      if (closer_of(tokens_[open_[depth]].kind) == kind) {
        report_unclosed(top, index);
        return false;
      }
    }
    report_stray(index);
    return false;
  }

  // Line numbers and indentation come from the line starts, found once:
  // SourceFile::line_column counts code points, too slow to call per bracket
  // on a long line of 100000 brackets.
  void index_lines() {
    const std::string& text = file_.text();
    line_starts_.push_back(0);
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') line_starts_.push_back(static_cast<uint32_t>(i + 1));
    }
  }

  // 1-based line of a token.
  uint32_t line_of(std::size_t index) const {
    const uint32_t offset = tokens_[index].span.begin;
    return static_cast<uint32_t>(std::upper_bound(line_starts_.begin(), line_starts_.end(), offset) -
                                 line_starts_.begin());
  }

  // Indentation (in bytes) of a token's line, and whether the token is the
  // first thing on it.
  uint32_t indentation(std::size_t index, bool* first_on_line = nullptr) const {
    const std::string& text = file_.text();
    const uint32_t start = line_starts_[line_of(index) - 1];
    uint32_t end = start;
    while (end < text.size() && (text[end] == ' ' || text[end] == '\t')) ++end;
    if (first_on_line) *first_on_line = end == tokens_[index].span.begin;
    return end - start;
  }

  // A `}` (or `)`, `]`) starting its own line, below its opening line, at
  // another indentation.
  bool indented_differently(std::size_t open, std::size_t close) const {
    if (line_of(open) == line_of(close)) return false;
    bool first = false;
    const uint32_t close_indent = indentation(close, &first);
    return first && close_indent != indentation(open);
  }

  Span span(std::size_t index) const { return tokens_[index].span; }

  // A closing bracket with nothing open to close.
  void report_stray(std::size_t index) {
    const Token& stray = tokens_[index];
    Diagnostic& d = diagnostics_.error("E1101", "unexpected closing delimiter " + spelled(stray), span(index));
    d.with_label("unexpected closing delimiter");
    if (!suspicious_.empty()) {
      // The last pair whose `}` is out of line: most likely the extra one,
      // which closed that block early and left this one with nothing to close.
      const Pair& pair = suspicious_.back();
      d.also(span(pair.open), "this delimiter might not be properly closed...");
      d.also(span(pair.close), "...as it matches this one, indented differently");
      d.with_help("remove the " + spelled(tokens_[pair.close]) + " on line " + std::to_string(line_of(pair.close)) +
                  " if it is the extra one");
    } else if (!closed_.empty()) {
      const Pair& pair = closed_.back();
      d.also(span(pair.open), "the block opened here is already closed on line " + std::to_string(line_of(pair.close)));
      d.with_help("remove this " + spelled(stray) + " if it is an extra one");
    }
  }

  // An opening bracket never closed: at the end of the file (`mismatch`
  // none) or when a closing bracket of another kind ends its enclosing group.
  void report_unclosed(std::size_t unclosed, std::optional<std::size_t> mismatch) {
    // A `{` left open at the end of the file is often not the one the
    // matching left unclosed, but one inside it, whose `}` was taken by an
    // outer block: the last out-of-line pair inside it tells.
    std::optional<Pair> moved;
    if (!mismatch) {
      for (auto it = suspicious_.rbegin(); it != suspicious_.rend(); ++it) {
        if (it->open > unclosed) {
          moved = *it;
          break;
        }
      }
    }
    const std::size_t primary = moved ? moved->open : unclosed;
    const Token& open = tokens_[primary];
    Diagnostic& d = diagnostics_.error("E1101", "unclosed delimiter " + spelled(open), span(primary));
    d.with_label("unclosed delimiter");
    if (moved) {
      d.also(span(moved->close), "this " + spelled(tokens_[moved->close]) + " is indented like line " +
                                     std::to_string(line_of(unclosed)) + " and likely closes its block");
    } else if (mismatch) {
      d.also(span(*mismatch), spelled(tokens_[*mismatch]) + " closes an outer group while " + spelled(open) +
                                  " is still open");
    } else {
      d.note("the file ends while it is still open");
    }
    d.with_help("close it with `" + std::string(token_spelling(closer_of(open.kind))) + "`");
  }

  const std::vector<Token>& tokens_;
  const SourceFile& file_;
  Diagnostics& diagnostics_;
  std::vector<uint32_t> line_starts_;
  std::vector<std::size_t> open_;   // indices of the brackets still open
  std::vector<Pair> closed_;        // every matched pair, in closing order
  std::vector<Pair> suspicious_;    // matched pairs whose closing line is out of line
};

}  // namespace

bool check_delimiters(const std::vector<Token>& tokens, const SourceFile& file, Diagnostics& diagnostics) {
  return Matcher(tokens, file, diagnostics).run();
}

}  // namespace linnet::syntax::detail
