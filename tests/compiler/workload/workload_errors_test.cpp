// Malformed workload texts: each gets an InvalidArgument status whose
// message names the source, the line:column of the mistake and what was
// expected. Also: pathological inputs (deep nesting, long chains, huge
// literals, binary garbage) fail cleanly instead of crashing or hanging.
#include <gtest/gtest.h>

#include <string>

#include "tunefarm/compiler/workload/workload_parser.h"

namespace tunefarm {
namespace {

struct BadCase {
  const char* name;
  std::string text;
  const char* where;   // "line:col"
  const char* phrase;  // a key phrase of the message
};

// Wraps statements in a small valid header; line 2 is the first statement.
std::string Body(const std::string& statements) {
  return "workload t(N = 8, M = 4) {\n" + statements + "\n}\n";
}

const BadCase kCases[] = {
    // ---- lexical
    {"empty", "", "1:1", "empty workload text"},
    {"only_comments", "# nothing here\n  \n", "3:1", "empty workload text"},
    {"bad_utf8", "workload t() {\n  # caf\xC3\x28\n}", "2:8", "not valid UTF-8"},
    {"overlong_utf8", "workload \xC0\xAF() {}", "1:10", "not valid UTF-8"},
    {"control_char", "workload t() {\x01}", "1:15", "control character"},
    {"nul_byte", std::string("workload t() {\0}", 16), "1:15", "control character"},
    {"non_ascii_outside_comment", "workload t\xC3\xA9() {}", "1:11", "unexpected character"},
    {"stray_char", Body("  A = input f32[N] $"), "2:20", "unexpected character '$'"},
    {"huge_int", Body("  A = input f32[99999999999999999999]"), "2:17", "too large"},
    {"huge_float", Body("  A = input f32[N]\n  b[i] = A[i] * 1e999"), "3:17", "out of range"},
    {"bad_exponent", Body("  A = input f32[N]\n  b[i] = A[i] * 1e+"), "3:17", "digits after the exponent"},
    {"number_then_letters", Body("  A = input f32[8x]"), "2:17", "malformed number"},
    // ---- syntax
    {"not_workload", "work t() {}", "1:1", "expected 'workload"},
    {"missing_name", "workload (N = 1) {}", "1:10", "expected the workload's name"},
    {"reserved_name", "workload sum() {}", "1:10", "reserved word"},
    {"missing_param_value", "workload t(N) {}", "1:13", "expected '='"},
    {"missing_brace", "workload t(N = 1)\n  A = input f32[N]", "2:3", "expected '{'"},
    {"unterminated_block", "workload t(N = 8) {\n  A = input f32[N]\n", "3:1", "unterminated block: the '{' at 1:19"},
    {"trailing_garbage", Body("  A = input f32[N]\n  b[i] = A[i]\n  output b") + "extra", "6:1",
     "after the end of the workload"},
    {"two_statements_on_a_line", Body("  A = input f32[N] B = input f32[N]"), "2:20", "expected a new line"},
    {"missing_input_keyword", Body("  A = f32[N]"), "2:7", "expected 'input"},
    {"unknown_dtype", Body("  A = input f33[N]"), "2:13", "expected an element type"},
    {"missing_shape_close", Body("  A = input f32[N, M"), "3:1", "',' or ']'"},
    {"missing_assign_in_stage", Body("  A = input f32[N]\n  b[i] A[i]"), "3:8", "expected '='"},
    {"missing_operand", Body("  A = input f32[N]\n  b[i] = A[i] *"), "4:1", "expected an expression"},
    {"unclosed_paren", Body("  A = input f32[N]\n  b[i] = (A[i] + 1.0"), "4:1", "')'"},
    {"nested_reduction", Body("  A = input f32[N]\n  b[i: 1] = 1.0 + sum(k: N) A[k]"), "3:19", "whole body of a stage"},
    {"sum_without_axes", Body("  A = input f32[N]\n  b[i: 1] = sum(A[i])"), "3:17", "needs its axes"},
    {"reduction_axis_without_extent", Body("  A = input f32[N]\n  b[i: 1] = sum(k) A[k]"), "3:17", "needs its axes"},
    {"stage_after_output", Body("  A = input f32[N]\n  b[i] = A[i]\n  output b\n  c[i] = b[i]"), "5:3",
     "outputs come last"},
    {"statement_starting_with_number", Body("  3 = input f32[N]"), "2:3", "expected a statement"},
    // ---- names
    {"unknown_tensor", Body("  A = input f32[N]\n  b[i: N] = Z[i]"), "3:13", "unknown tensor 'Z'"},
    {"unknown_axis", Body("  A = input f32[N]\n  b[i: N] = A[q]"), "3:15", "unknown name 'q'"},
    {"tensor_without_indices", Body("  A = input f32[N]\n  b[i: N] = A"), "3:13", "used without indices"},
    {"read_before_defined", Body("  A = input f32[N]\n  b[i] = A[i] + c[i]\n  c[i] = A[i]\n  output b"), "3:17",
     "read before it is defined"},
    {"reads_itself", Body("  A = input f32[N]\n  b[i] = A[i] + b[i]\n  output b"), "3:17", "read before it is defined"},
    {"duplicate_tensor", Body("  A = input f32[N]\n  A = input f32[M]"), "3:3", "duplicate name 'A'"},
    {"duplicate_param", "workload t(N = 1, N = 2) {}", "1:19", "duplicate parameter 'N'"},
    {"tensor_named_like_param", Body("  N = input f32[M]"), "2:3", "duplicate name 'N'"},
    {"duplicate_axis", Body("  A = input f32[N, N]\n  b[i, i] = A[i, i]"), "3:8", "duplicate axis 'i'"},
    {"axis_named_like_param", Body("  A = input f32[N]\n  b[M] = A[M]"), "3:5", "name of a parameter"},
    {"reduce_axis_shadows_axis", Body("  A = input f32[N, N]\n  b[i] = sum(i: N) A[i, i]"), "3:14", "duplicate axis 'i'"},
    {"unknown_function", Body("  A = input f32[N]\n  b[i] = foo(A[i])"), "3:10", "unknown function 'foo'"},
    {"tensor_called", Body("  A = input f32[N]\n  b[i: N] = A(i)"), "3:13", "is a tensor"},
    {"unknown_shape_param", Body("  A = input f32[Q]"), "2:17", "unknown parameter 'Q'"},
    {"unknown_output", Body("  A = input f32[N]\n  b[i] = A[i]\n  output z"), "4:10", "unknown tensor 'z'"},
    {"output_of_input", Body("  A = input f32[N]\n  b[i] = A[i]\n  output A"), "4:10", "is an input"},
    {"duplicate_output", Body("  A = input f32[N]\n  b[i] = A[i]\n  output b, b"), "4:13", "duplicate output"},
    {"no_outputs", Body("  A = input f32[N]\n  b[i] = A[i]"), "4:1", "no outputs"},
    // ---- shapes and extents
    {"zero_dim", Body("  A = input f32[N - 8]"), "2:17", "expected an extent in [1,"},
    {"negative_dim", Body("  A = input f32[0 - N]"), "2:17", "expected an extent in [1,"},
    {"huge_dim", Body("  A = input f32[4294967296]"), "2:17", "expected an extent in [1,"},
    {"too_many_elements", Body("  A = input f32[1048576, 1048576, 2]"), "2:3", "more than 2^40 elements"},
    {"shape_overflow", Body("  A = input f32[9223372036854775807 + 1]"), "2:37", "overflow"},
    {"shape_division_by_zero", Body("  A = input f32[N / (M - 4)]"), "2:19", "division by zero"},
    {"float_in_shape", Body("  A = input f32[2.5]"), "2:17", "not allowed in a shape"},
    {"negative_param", "workload t(N = 0 - 3) {}", "1:16", "expected a value in [0,"},
    {"cannot_infer_extent", Body("  A = input f32[N]\n  b[i, j] = A[i] * 2.0"), "3:8", "cannot infer the extent of axis 'j'"},
    {"zero_reduce_extent", Body("  A = input f32[N]\n  b[i: 1] = sum(k: N - 8) A[k]"), "3:20", "expected an extent"},
    // ---- indices and ranges
    {"wrong_index_count", Body("  A = input f32[N, M]\n  b[i: N] = A[i]"), "3:13", "2 dimensions but is read with 1"},
    {"float_index", Body("  A = input f32[N]\n  B = input f32[N]\n  b[i] = A[i] + A[f32(i)]"), "4:19", "expected an integer expression"},
    {"float_literal_index", Body("  A = input f32[N]\n  b[i: N] = A[0.5]"), "3:15", "float literal"},
    {"unguarded_out_of_range", Body("  A = input f32[N]\n  b[i: N] = A[i + 1]"), "3:15", "can be out of range"},
    {"always_out_of_range", Body("  A = input f32[N]\n  b[i: N] = select(i < 4, A[i + 100], 0.0)"), "3:29",
     "always out of range"},
    {"negative_index", Body("  A = input f32[N]\n  b[i: N] = A[i - 1]"), "3:15", "can be out of range"},
    {"unbounded_index", Body("  A = input f32[N]\n  I = input i32[N]\n  b[i] = A[I[i]]"), "4:12", "cannot be bounded"},
    // ---- types
    {"type_mismatch", Body("  A = input f32[N]\n  B = input i32[N]\n  c[i] = A[i] + B[i]"), "4:15",
     "type mismatch: f32 + i32"},
    {"select_branch_mismatch", Body("  A = input f32[N]\n  B = input f64[N]\n  c[i] = select(i < 2, A[i], B[i])"), "4:10",
     "type mismatch"},
    {"select_non_bool", Body("  A = input f32[N]\n  c[i] = select(A[i], A[i], 0.0)"), "3:17", "expected a bool"},
    {"and_of_numbers", Body("  A = input f32[N]\n  c[i] = A[i] && A[i]"), "3:15", "expected bool operands"},
    {"not_of_number", Body("  A = input f32[N]\n  c[i] = !A[i]"), "3:10", "expected a bool operand"},
    {"mod_of_floats", Body("  A = input f32[N]\n  c[i] = A[i] % 2.0"), "3:15", "expected integer operands"},
    {"float_literal_for_int", Body("  A = input i32[N]\n  c[i] = A[i] + 0.5"), "3:17", "float literal"},
    {"literal_overflows_i8", Body("  A = input i8[N]\n  c[i] = A[i] + 300"), "3:17", "does not fit in i8"},
    {"exp_of_int", Body("  A = input i32[N]\n  c[i] = exp(A[i])"), "3:10", "expected a float argument"},
    {"wrong_arity", Body("  A = input f32[N]\n  c[i] = pow(A[i])"), "3:10", "takes 2 arguments"},
    {"integer_division_by_zero", Body("  A = input i32[N]\n  c[i] = A[i] / 0"), "3:15", "division by zero"},
    {"negate_unsigned", Body("  A = input u8[N]\n  c[i] = -A[i]"), "3:10", "expected a signed integer"},
    {"sum_of_bools", Body("  A = input f32[N]\n  c[i: 1] = sum(k: N) A[k] > 0.0"), "3:13", "sum of bool"},
    {"bool_literal_number", Body("  A = input f32[N]\n  c[i] = select(1, A[i], 0.0)"), "3:17", "expected a bool"},
};

TEST(WorkloadErrors, EachMalformedTextGetsAPositionedMessage) {
  static_assert(sizeof(kCases) / sizeof(kCases[0]) >= 40);
  for (const BadCase& c : kCases) {
    SCOPED_TRACE(c.name);
    ParseOptions options;
    options.source_name = "bad.tf";
    Result<Workload> w = ParseWorkload(c.text, options);
    ASSERT_FALSE(w.ok()) << "parsed:\n" << c.text;
    EXPECT_EQ(w.status().code(), StatusCode::kInvalidArgument) << w.status().ToString();
    const std::string& m = w.status().message();
    EXPECT_EQ(m.rfind(std::string("bad.tf:") + c.where + ": ", 0), 0u) << m;
    EXPECT_NE(m.find(c.phrase), std::string::npos) << m;
    EXPECT_NE(m.find("expected"), std::string::npos) << m;
  }
}

TEST(WorkloadErrors, TypeMismatchSuggestsACast) {
  Result<Workload> w = ParseWorkload(Body("  A = input f32[N]\n  B = input i32[N]\n  c[i] = A[i] + B[i]\n  output c"));
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("insert a cast such as f32(...)"), std::string::npos) << w.status().message();
}

TEST(WorkloadErrors, InvalidParamOverrides) {
  const std::string text = Body("  A = input f32[N]\n  b[i] = A[i]\n  output b");
  ParseOptions unknown;
  unknown.param_overrides = {{"Q", 3}};
  Result<Workload> w = ParseWorkload(text, unknown);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("'Q' names no parameter"), std::string::npos) << w.status().message();
  EXPECT_NE(w.status().message().find("N, M"), std::string::npos) << w.status().message();

  ParseOptions negative;
  negative.param_overrides = {{"N", -1}};
  w = ParseWorkload(text, negative);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("<input>:1:12: parameter 'N' is overridden to -1"), std::string::npos)
      << w.status().message();

  ParseOptions zero;
  zero.param_overrides = {{"N", 0}};
  w = ParseWorkload(text, zero);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("<input>:2:17: dimension 0 of 'A' is 0"), std::string::npos)
      << w.status().message();

  ParseOptions huge;
  huge.param_overrides = {{"N", int64_t{1} << 40}};
  EXPECT_FALSE(ParseWorkload(text, huge).ok());
}

TEST(WorkloadErrors, DeepNestingIsRejectedNotACrash) {
  for (const char* open : {"(", "-", "!", "exp(", "A["}) {
    std::string e;
    for (int i = 0; i < 100000; ++i) e += open;
    Result<Workload> w = ParseWorkload(Body("  A = input f32[N]\n  b[i] = " + e));
    ASSERT_FALSE(w.ok()) << open;
    EXPECT_NE(w.status().message().find("nested too deeply"), std::string::npos) << w.status().message();
  }
}

TEST(WorkloadErrors, LongOperatorChainsAreBoundedToo) {
  std::string sum = "A[i]";
  for (int i = 0; i < 50000; ++i) sum += " + A[i]";
  Result<Workload> w = ParseWorkload(Body("  A = input f32[N]\n  b[i] = " + sum + "\n  output b"));
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("nested too deeply"), std::string::npos) << w.status().message();

  std::string shape = "1";
  for (int i = 0; i < 50000; ++i) shape += " * 1";
  EXPECT_FALSE(ParseWorkload(Body("  A = input f32[" + shape + "]")).ok());

  // Long but shallow is fine: 200 terms.
  std::string ok = "A[i]";
  for (int i = 0; i < 200; ++i) ok += " + A[i]";
  Result<Workload> fine = ParseWorkload(Body("  A = input f32[N]\n  b[i] = " + ok + "\n  output b"));
  EXPECT_TRUE(fine.ok()) << fine.status().ToString();
}

TEST(WorkloadErrors, BinaryGarbageFailsCleanly) {
  std::string garbage;
  uint32_t x = 12345;
  for (int i = 0; i < 4096; ++i) {
    x = x * 1103515245u + 12345u;
    garbage += static_cast<char>(x >> 24);
  }
  EXPECT_FALSE(ParseWorkload(garbage).ok());
  EXPECT_FALSE(ParseWorkload("workload t() {" + garbage).ok());
}

}  // namespace
}  // namespace tunefarm
