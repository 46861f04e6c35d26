// Folding at import of Range, Where, the comparisons and the logic operators
// (constant_fold.cpp), on graphs written here: Range's element count after
// ONNX's rule max(ceil((limit - start) / delta), 0) for integer and float
// arguments and negative steps, an empty Range refused naming its node, and
// Where / Less / Equal / And / Or / Not with numpy broadcasting of constants.
// Each folded value reaches the model as a constant read with read_weights.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <onnx/onnx_pb.h>

#include "tunefarm/frontend/model.h"

namespace tunefarm::frontend {
namespace {

namespace fs = std::filesystem;

// A graph under construction: constants are initializers, every node has one output.
class GraphWriter {
 public:
  GraphWriter() {
    model_.set_ir_version(8);
    model_.add_opset_import()->set_version(17);
    model_.mutable_graph()->set_name("fold");
  }
  void Int64(const std::string& name, std::vector<int64_t> dims, const std::vector<int64_t>& values) {
    onnx::TensorProto* t = Initializer(name, onnx::TensorProto::INT64, dims);
    for (int64_t v : values) t->add_int64_data(v);
  }
  void Float(const std::string& name, std::vector<int64_t> dims, const std::vector<float>& values) {
    onnx::TensorProto* t = Initializer(name, onnx::TensorProto::FLOAT, dims);
    for (float v : values) t->add_float_data(v);
  }
  void Node(const std::string& op, const std::vector<std::string>& inputs, const std::string& output,
            int64_t cast_to = -1, int64_t axis = -1) {
    onnx::NodeProto* n = model_.mutable_graph()->add_node();
    n->set_name(output + "_node");
    n->set_op_type(op);
    for (const std::string& in : inputs) n->add_input(in);
    n->add_output(output);
    if (cast_to >= 0) {
      onnx::AttributeProto* a = n->add_attribute();
      a->set_name("to");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(cast_to);
    }
    if (axis >= 0) {
      onnx::AttributeProto* a = n->add_attribute();
      a->set_name("axis");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(axis);
    }
  }
  // y = Add(x, value): the f32 graph input and output that carry a folded value.
  Result<Model> AddToInputAndImport(const std::string& value, std::vector<int64_t> dims) {
    Node("Add", {"x", value}, "y");
    Value(model_.mutable_graph()->add_input(), "x", dims);
    Value(model_.mutable_graph()->add_output(), "y", dims);
    fs::path path = fs::temp_directory_path() / ("tunefarm_mask_fold_" + std::to_string(::getpid()) + ".onnx");
    std::ofstream(path, std::ios::binary) << model_.SerializeAsString();
    ImportOptions options;
    options.read_weights = true;
    auto m = ImportOnnx(path.string(), options);
    fs::remove(path);
    return m;
  }

 private:
  onnx::TensorProto* Initializer(const std::string& name, int32_t type, const std::vector<int64_t>& dims) {
    onnx::TensorProto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (int64_t d : dims) t->add_dims(d);
    return t;
  }
  static void Value(onnx::ValueInfoProto* v, const std::string& name, const std::vector<int64_t>& dims) {
    v->set_name(name);
    onnx::TypeProto_Tensor* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  }
  onnx::ModelProto model_;
};

// Range(start, limit, delta) of int64 scalars, cast to f32, then one 100
// appended (so that an empty range still gives a tensor to add), added to an
// input of `count` + 1 elements.
Result<Model> ImportIntRange(int64_t start, int64_t limit, int64_t delta, int64_t count) {
  GraphWriter w;
  w.Int64("start", {}, {start});
  w.Int64("limit", {}, {limit});
  w.Int64("delta", {}, {delta});
  w.Float("hundred", {1}, {100});
  w.Node("Range", {"start", "limit", "delta"}, "r");
  w.Node("Cast", {"r"}, "rf", onnx::TensorProto::FLOAT);
  w.Node("Concat", {"rf", "hundred"}, "joined", -1, 0);
  return w.AddToInputAndImport("joined", {count + 1});
}

TEST(MaskFold, RangeCountsCeilOfTheSpanOverTheStep) {
  auto m = ImportIntRange(2, 9, 3, 3);  // 2, 5, 8
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->weights.at("rf"), (std::vector<float>{2, 5, 8}));
  EXPECT_EQ(m->weights.at("joined"), (std::vector<float>{2, 5, 8, 100}));
  EXPECT_EQ(m->Tensor("r")->shape, (std::vector<int64_t>{3}));
}

TEST(MaskFold, RangeWithANegativeStepCountsDown) {
  auto m = ImportIntRange(10, 4, -3, 2);  // 10, 7 (4 is the limit, excluded)
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->weights.at("rf"), (std::vector<float>{10, 7}));
  m = ImportIntRange(3, -3, -2, 3);  // 3, 1, -1
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->weights.at("rf"), (std::vector<float>{3, 1, -1}));
}

TEST(MaskFold, AnEmptyRangeIsAnErrorNamingItsNode) {
  for (auto [start, limit, delta] : {std::tuple{5, 0, 1}, std::tuple{0, 5, -1}, std::tuple{4, 4, 2}}) {
    auto m = ImportIntRange(start, limit, delta, 0);
    ASSERT_FALSE(m.ok()) << start << " " << limit << " " << delta;
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(m.status().message().find("'r_node' (Range)"), std::string::npos) << m.status().message();
    EXPECT_NE(m.status().message().find("is empty"), std::string::npos) << m.status().message();
  }
}

TEST(MaskFold, FloatRangeCountsAPartialStep) {
  GraphWriter w;
  w.Float("start", {}, {0.5f});
  w.Float("limit", {}, {1.75f});
  w.Float("delta", {}, {0.5f});
  w.Node("Range", {"start", "limit", "delta"}, "r");  // ceil(1.25 / 0.5) = 3: 0.5, 1, 1.5
  auto m = w.AddToInputAndImport("r", {3});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->weights.at("r"), (std::vector<float>{0.5f, 1.0f, 1.5f}));
}

TEST(MaskFold, WhereAndComparisonsBroadcastLikeNumpy) {
  GraphWriter w;
  w.Float("a", {2, 1}, {1, 4});
  w.Float("b", {3}, {0, 2, 4});
  w.Float("t", {1, 3}, {10, 20, 30});
  w.Float("f", {}, {-1});
  w.Node("Less", {"a", "b"}, "lt");            // [[F, T, T], [F, F, F]]
  w.Node("Equal", {"a", "b"}, "eq");           // [[F, F, F], [F, F, T]]
  w.Node("Or", {"lt", "eq"}, "le");            // [[F, T, T], [F, F, T]]
  w.Node("Not", {"eq"}, "ne");                 // [[T, T, T], [T, T, F]]
  w.Node("And", {"le", "ne"}, "lt_again");     // [[F, T, T], [F, F, F]]
  w.Node("Where", {"lt_again", "t", "f"}, "picked");
  auto m = w.AddToInputAndImport("picked", {2, 3});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->weights.at("picked"), (std::vector<float>{-1, 20, 30, -1, -1, -1}));
  EXPECT_EQ(m->weights.at("le"), (std::vector<float>{0, 1, 1, 0, 0, 1}));
  // Every value folded: the model is one task, the Add.
  EXPECT_EQ(m->tasks.size(), 1u);
}

TEST(MaskFold, OperandsThatDoNotBroadcastAreAnErrorNamingTheNode) {
  GraphWriter w;
  w.Float("a", {2}, {1, 4});
  w.Float("b", {3}, {0, 2, 4});
  w.Node("Greater", {"a", "b"}, "gt");
  w.Node("Cast", {"gt"}, "gtf", onnx::TensorProto::FLOAT);
  auto m = w.AddToInputAndImport("gtf", {3});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("gt_node"), std::string::npos) << m.status().message();
}

// A folded non-scalar mask read at run time: a bool constant, which tasks do not read.
TEST(MaskFold, AFoldedMaskReadByATaskIsRefusedNamingIt) {
  GraphWriter w;
  w.Float("a", {2, 1}, {1, 4});
  w.Float("b", {3}, {0, 2, 4});
  w.Float("f", {}, {-1});
  w.Node("Less", {"a", "b"}, "causal");
  w.Node("Where", {"causal", "x", "f"}, "masked");
  auto m = w.AddToInputAndImport("masked", {2, 3});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(m.status().message().find("tensor 'causal' is bool"), std::string::npos) << m.status().message();
}

}  // namespace
}  // namespace tunefarm::frontend
