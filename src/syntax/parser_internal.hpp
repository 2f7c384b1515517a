// The parser's class, shared by parser.cpp (declarations and statements) and
// parser_expressions.cpp (expressions, types, patterns). Not a public header.
//
// Design:
// - Recursive descent over the token vector, one token of lookahead plus a few
//   fixed peeks; no backtracking, so work is linear in the token count.
// - `name<` is a generic call only when its matching `>` is immediately
//   followed by `(` (spec §5.5). The matching `>` of every `<` is found once,
//   before parsing, by a bracket-aware scan (compute_angle_matches).
// - Recursion depth is counted (DepthGuard, and one level per link of an
//   operator or suffix chain). Past max_nesting_depth the parser reports once,
//   abandons the rest of the file (jumping to its end) and unwinds: every
//   production then finds the end of the file and returns at once.
// - After an error, a statement or an item skips to where the next one
//   starts; at most one error is reported per token.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "linnet/syntax/ast.hpp"
#include "linnet/syntax/diagnostic.hpp"
#include "linnet/syntax/lexer.hpp"
#include "linnet/syntax/parser.hpp"

namespace linnet::syntax::detail {

class Parser {
 public:
  Parser(const SourceManager& sources, uint32_t file_id, Diagnostics& diagnostics);
  std::unique_ptr<ast::File> run();

 private:
  // ---- tokens
  const Token& peek(size_t ahead = 0) const;
  TokenKind kind(size_t ahead = 0) const { return peek(ahead).kind; }
  bool at(TokenKind k) const { return kind() == k; }
  bool at_word(std::string_view word) const { return at(TokenKind::Identifier) && peek().text == word; }
  void advance();
  bool accept(TokenKind k);
  uint32_t here() const { return peek().span.begin; }
  Span span_from(uint32_t begin) const;
  Span here_span() const { return peek().span; }

  // ---- diagnostics
  // Reports unless an error was already reported at this token or the parser
  // is unwinding from too deep a nesting; returns nullptr when suppressed.
  Diagnostic* error_at(Span where, std::string message, const char* code = "E1101");
  Diagnostic* error_here(std::string message, const char* code = "E1101");
  Diagnostic* expected(std::string_view what);
  bool expect(TokenKind k, std::string_view context = {});
  std::string describe(const Token& token) const;
  ast::Ident expect_name(std::string_view what);
  void report_reserved_word(const Token& token);

  // ---- nesting limit
  class DepthGuard {
   public:
    explicit DepthGuard(Parser& parser);
    ~DepthGuard();
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
    bool exceeded() const { return exceeded_; }

   private:
    Parser& parser_;
    bool exceeded_ = false;
  };
  // Counts the links of an operator or suffix chain toward the depth.
  class ChainGuard {
   public:
    explicit ChainGuard(Parser& parser) : parser_(parser) {}
    ~ChainGuard() { parser_.depth_ -= links_; }
    ChainGuard(const ChainGuard&) = delete;
    ChainGuard& operator=(const ChainGuard&) = delete;
    bool extend();

   private:
    Parser& parser_;
    uint32_t links_ = 0;
  };
  void report_too_deep();

  // ---- recovery
  bool starts_item(size_t ahead = 0) const;
  bool starts_statement() const;
  void skip_to_statement_start();
  void skip_to_item_start();
  void skip_balanced();

  // ---- lookahead tables
  void compute_angle_matches();
  bool is_generic_call_open(size_t index) const;
  bool is_reduction_start(size_t index) const;

  // ---- file and items (parser.cpp)
  void parse_module_decl(ast::File& file);
  void parse_use(ast::File& file);
  std::vector<ast::Ident> parse_path(std::string_view what);
  ast::ItemPtr parse_item(bool in_block);
  std::string take_doc_comments();
  ast::ItemPtr parse_const(uint32_t begin);
  ast::ItemPtr parse_type_alias(uint32_t begin);
  ast::ItemPtr parse_struct(uint32_t begin);
  ast::ItemPtr parse_enum(uint32_t begin);
  ast::ItemPtr parse_function(uint32_t begin, ast::FunctionKind function);
  ast::ItemPtr parse_kernel(uint32_t begin);
  ast::ItemPtr parse_block(uint32_t begin);
  ast::ItemPtr parse_member(uint32_t begin, bool in_block);
  std::vector<ast::GenericParam> parse_generic_params();
  std::vector<ast::Param> parse_params();
  ast::WhereClause parse_where();
  std::unique_ptr<ast::GradClause> parse_grad();

  // ---- statements (parser.cpp)
  ast::Body parse_body();
  ast::StmtPtr parse_statement();
  ast::StmtPtr parse_let(uint32_t begin);
  ast::StmtPtr parse_var(uint32_t begin);
  ast::StmtPtr parse_return(uint32_t begin);
  ast::StmtPtr parse_static_for(uint32_t begin);
  ast::StmtPtr parse_store(uint32_t begin);
  ast::ForLoop parse_for_loop();
  ast::StmtPtr statement_error(uint32_t begin);

  // ---- expressions (parser_expressions.cpp)
  ast::ExprPtr parse_expr();
  ast::ExprPtr parse_binary(int min_precedence);
  ast::ExprPtr parse_binary_rest(ast::ExprPtr lhs, uint32_t begin, int min_precedence);
  ast::ExprPtr parse_unary();
  ast::ExprPtr parse_postfix_rest(ast::ExprPtr expr, uint32_t begin);
  ast::ExprPtr parse_primary();
  ast::ExprPtr parse_paren_or_tuple();
  ast::ExprPtr parse_shape_literal();
  ast::ExprPtr parse_reduction();
  ast::ExprPtr parse_if();
  ast::ExprPtr parse_match();
  ast::ExprPtr parse_for_expr();
  ast::ExprPtr parse_braced_value();
  std::vector<ast::Argument> parse_arguments();
  std::vector<ast::IndexComponent> parse_index_components();
  ast::ExprPtr finish_call(ast::ExprPtr callee, uint32_t begin, std::vector<ast::GenericArg> generic_args,
                           bool has_generic_args);
  ast::ExprPtr error_expr(uint32_t begin);
  static bool is_path_expr(const ast::Expr& expr);
  ast::ExprPtr path_to_expr(std::vector<ast::Ident> path);

  // ---- generic arguments and types (parser_expressions.cpp)
  std::vector<ast::GenericArg> parse_generic_args();
  ast::GenericArg parse_type_or_expr(bool full_expression);
  ast::GenericArg continue_as_expression(ast::ExprPtr expr, uint32_t begin, bool full_expression);
  ast::ExprPtr generic_arg_to_expr(ast::GenericArg arg);
  ast::ExprPtr type_to_expr(ast::TypePtr type);
  ast::TypePtr parse_type();
  ast::TypePtr parse_type_primary();
  ast::TypePtr parse_named_type();
  ast::TypePtr parse_tensor_type();
  ast::TypePtr finish_optional(ast::TypePtr type, uint32_t begin);

  // ---- patterns (parser_expressions.cpp)
  ast::PatternPtr parse_pattern(bool match_arm);

  const SourceManager& sources_;
  uint32_t file_;
  Diagnostics& diagnostics_;
  std::vector<Token> tokens_;
  std::vector<Comment> comments_;
  size_t next_comment_ = 0;
  // For each `<` token, the index of its matching `>` (0 when it has none).
  std::vector<uint32_t> angle_close_;
  size_t pos_ = 0;
  uint32_t previous_end_ = 0;  // end offset of the last consumed token
  uint32_t depth_ = 0;
  bool abandoned_ = false;     // the nesting limit was hit: the rest of the file is skipped, unreported
  bool unbalanced_ = false;    // brackets do not match (reported once, before parsing): parse errors are not reported
  size_t errors_ = 0;          // every error, reported or suppressed: a production failed if it grew
  size_t last_error_token_ = static_cast<size_t>(-1);
};

}  // namespace linnet::syntax::detail
