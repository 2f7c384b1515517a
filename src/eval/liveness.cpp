// Letting go of locals after their last use. A function's `let` values (and
// its parameters, and the locals of a loop body or a block) would otherwise
// stay alive until the body ends: in a card's layer that keeps every
// intermediate activation of the layer at once (about 1 GiB at 512 tokens
// in GPT-OSS's dense expert block). After each statement of a list, the
// locals of the innermost scope that no later statement of the list
// mentions are erased; a tensor whose last reference that was is freed.
//
// "Mentions" is read from the source text: every identifier-like word of a
// statement (its nested bodies, types and even member names included)
// counts. That over-approximates the names a statement can read, never
// under: Linnet has no closures, and a callee cannot see its caller's
// locals, so a local is only ever read through its name written in the
// body that declared it. A list with a statement that has no source text
// (a synthesized one) lets go of nothing.
#include <string_view>
#include <unordered_set>

#include "evaluator.hpp"

namespace linnet::eval {

namespace {

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}

// The identifier-like words of `text`.
std::unordered_set<std::string> words_of(std::string_view text) {
  std::unordered_set<std::string> words;
  size_t i = 0;
  while (i < text.size()) {
    if (!word_char(text[i])) {
      ++i;
      continue;
    }
    const size_t begin = i;
    while (i < text.size() && word_char(text[i])) ++i;
    words.emplace(text.substr(begin, i - begin));
  }
  return words;
}

}  // namespace

const Evaluator::ReleasePlan& Evaluator::release_plan(const std::vector<ast::StmtPtr>& statements, Span kept) {
  auto found = release_plans.find(&statements);
  if (found != release_plans.end()) return found->second;
  ReleasePlan plan(statements.size());
  std::vector<std::unordered_set<std::string>> mentions;
  bool readable = true;
  for (const ast::StmtPtr& statement : statements) {
    const std::string text = source_text(statement->span);
    if (text.empty()) readable = false;
    mentions.push_back(words_of(text));
  }
  if (readable && !statements.empty()) {
    // Walking backwards, a word seen for the first time is last mentioned
    // by this statement. Words of `kept` (read after the list ends, such as
    // a function's result type) are never let go.
    std::unordered_set<std::string> seen = words_of(source_text(kept));
    for (size_t i = statements.size(); i-- > 0;) {
      for (const std::string& word : mentions[i]) {
        if (seen.insert(word).second) plan[i].push_back(word);
      }
    }
  }
  return release_plans.emplace(&statements, std::move(plan)).first->second;
}

void Evaluator::release_dead_locals(const std::vector<std::string>& names, Frame& frame) {
  if (frame.scopes.empty()) return;
  auto& scope = frame.scopes.back();
  for (const std::string& name : names) scope.erase(name);
}

}  // namespace linnet::eval
