#include "linnet/syntax/ast.hpp"

namespace linnet::syntax::ast {

const char* binary_op_spelling(BinaryOp op) {
  switch (op) {
    case BinaryOp::Or: return "||";
    case BinaryOp::And: return "&&";
    case BinaryOp::Equal: return "==";
    case BinaryOp::NotEqual: return "!=";
    case BinaryOp::Less: return "<";
    case BinaryOp::LessEqual: return "<=";
    case BinaryOp::Greater: return ">";
    case BinaryOp::GreaterEqual: return ">=";
    case BinaryOp::BitOr: return "|";
    case BinaryOp::BitXor: return "^";
    case BinaryOp::BitAnd: return "&";
    case BinaryOp::Add: return "+";
    case BinaryOp::Subtract: return "-";
    case BinaryOp::Multiply: return "*";
    case BinaryOp::Divide: return "/";
    case BinaryOp::Remainder: return "%";
  }
  return "?";
}

const char* unary_op_spelling(UnaryOp op) {
  switch (op) {
    case UnaryOp::Not: return "!";
    case UnaryOp::Negate: return "-";
    case UnaryOp::Plus: return "+";
  }
  return "?";
}

const char* reduction_spelling(ReductionKind kind) {
  switch (kind) {
    case ReductionKind::Sum: return "sum";
    case ReductionKind::Prod: return "prod";
    case ReductionKind::Max: return "max";
    case ReductionKind::Min: return "min";
    case ReductionKind::Any: return "any";
    case ReductionKind::All: return "all";
  }
  return "?";
}

const char* generic_kind_spelling(GenericKind kind) {
  switch (kind) {
    case GenericKind::Dim: return "Dim";
    case GenericKind::Shape: return "Shape";
    case GenericKind::DType: return "DType";
    case GenericKind::Numeric: return "Numeric";
    case GenericKind::Integer: return "Integer";
    case GenericKind::Float: return "Float";
    case GenericKind::Unknown: return "?";
  }
  return "?";
}

const char* function_kind_spelling(FunctionKind kind) {
  switch (kind) {
    case FunctionKind::Fn: return "fn";
    case FunctionKind::Op: return "op";
    case FunctionKind::Entry: return "entry";
  }
  return "?";
}

const char* member_kind_spelling(MemberKind kind) {
  switch (kind) {
    case MemberKind::Param: return "param";
    case MemberKind::Buffer: return "buffer";
    case MemberKind::State: return "state";
    case MemberKind::Sub: return "sub";
  }
  return "?";
}

const char* store_kind_spelling(StoreKind kind) {
  switch (kind) {
    case StoreKind::Store: return "store";
    case StoreKind::AtomicAdd: return "atomic_add";
    case StoreKind::AtomicMax: return "atomic_max";
    case StoreKind::AtomicMin: return "atomic_min";
  }
  return "?";
}

std::string join_path(const std::vector<Ident>& path) {
  std::string text;
  for (const Ident& segment : path) {
    if (!text.empty()) text += '.';
    text += segment.text;
  }
  return text;
}

}  // namespace linnet::syntax::ast
