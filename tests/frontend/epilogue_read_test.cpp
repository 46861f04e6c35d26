// How a fused epilogue reads its anchor: a batch-1 convolution or dense layer
// followed by a residual Add and a ReLU (graphs written here, at extents 1,
// 7, 17 and the primes 101 and 103) becomes acc and out, where out reads acc
// at exactly its own iteration variables -- the unit batch dimension at o0,
// not at a broadcast 0 -- so that the tuner can place out into acc's tile
// (reverse_compute_at) as it does a bias-only epilogue. The placed program
// computes what the default one does (reference interpreter), and the task
// compiles to what the interpreter computes.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <onnx/onnx_pb.h>

#include "compiled_vs_interpreted.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/frontend/model.h"

namespace tunefarm::frontend {
namespace {

namespace fs = std::filesystem;

// A graph of one chain: weights are initializers, `x` and `residual` inputs.
class ChainWriter {
 public:
  ChainWriter() {
    model_.set_ir_version(8);
    model_.add_opset_import()->set_version(17);
    model_.mutable_graph()->set_name("epilogue");
  }
  void Weight(const std::string& name, const std::vector<int64_t>& dims) {
    onnx::TensorProto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t count = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      count *= d;
    }
    for (int64_t i = 0; i < count; ++i) t->add_float_data(float(i % 5) * 0.25f - 0.5f);
  }
  void Node(const std::string& op, const std::vector<std::string>& inputs, const std::string& output) {
    onnx::NodeProto* n = model_.mutable_graph()->add_node();
    n->set_name(output + "_node");
    n->set_op_type(op);
    for (const std::string& in : inputs) n->add_input(in);
    n->add_output(output);
  }
  void Input(const std::string& name, const std::vector<int64_t>& dims) {
    Value(model_.mutable_graph()->add_input(), name, dims);
  }
  Result<Model> Import(const std::string& output, const std::vector<int64_t>& dims) {
    Value(model_.mutable_graph()->add_output(), output, dims);
    fs::path path = fs::temp_directory_path() / ("tunefarm_epilogue_read_" + std::to_string(::getpid()) + ".onnx");
    std::ofstream(path, std::ios::binary) << model_.SerializeAsString();
    auto m = ImportOnnx(path.string());
    fs::remove(path);
    return m;
  }

 private:
  static void Value(onnx::ValueInfoProto* v, const std::string& name, const std::vector<int64_t>& dims) {
    v->set_name(name);
    onnx::TypeProto_Tensor* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  }
  onnx::ModelProto model_;
};

// relu(conv1x1(x) + bias + residual), NCHW with batch 1.
Result<Model> ConvAddRelu(int64_t c, int64_t k, int64_t h, int64_t w) {
  ChainWriter g;
  g.Input("x", {1, c, h, w});
  g.Input("residual", {1, k, h, w});
  g.Weight("wt", {k, c, 1, 1});
  g.Weight("bias", {k});
  g.Node("Conv", {"x", "wt", "bias"}, "conv");
  g.Node("Add", {"conv", "residual"}, "sum");
  g.Node("Relu", {"sum"}, "y");
  return g.Import("y", {1, k, h, w});
}

// relu(x @ wt + bias + residual) for one row: a dense layer at batch 1.
Result<Model> DenseAddRelu(int64_t k, int64_t n) {
  ChainWriter g;
  g.Input("x", {1, k});
  g.Input("residual", {1, n});
  g.Weight("wt", {k, n});
  g.Weight("bias", {n});
  g.Node("MatMul", {"x", "wt"}, "mm");
  g.Node("Add", {"mm", "bias"}, "biased");
  g.Node("Add", {"biased", "residual"}, "sum");
  g.Node("Relu", {"sum"}, "y");
  return g.Import("y", {1, n});
}

const ir::Block* FindBlock(const ir::PrimFunc& f, const std::string& name) {
  const ir::Block* found = nullptr;
  ir::PostOrderVisit(f.body, [&](const ir::IRNode* n) {
    if (n->kind == ir::IRNodeKind::kBlock && static_cast<const ir::Block*>(n)->name == name) {
      found = static_cast<const ir::Block*>(n);
    }
  });
  return found;
}

// The loads of buffer `buffer` in block `b`, each as its indices printed.
std::vector<std::string> LoadsOf(const ir::Block* b, const std::string& buffer) {
  std::vector<std::string> loads;
  ir::PostOrderVisit(b->body, [&](const ir::IRNode* n) {
    if (n->kind != ir::IRNodeKind::kLoad) return;
    const auto* l = static_cast<const ir::Load*>(n);
    if (l->buffer->name != buffer) return;
    std::string s;
    for (size_t d = 0; d < l->indices.size(); ++d) s += (d ? ", " : "") + ir::ToString(l->indices[d]);
    loads.push_back(s);
  });
  return loads;
}

// The one task of `m`: out reads acc at its own iteration variables, can be
// placed into acc's outermost loop, and computes the same placed or not.
void ExpectEpilogueFusible(const Result<Model>& m) {
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->tasks.size(), 1u);
  const Workload& w = m->tasks[0].workload;
  SCOPED_TRACE(w.name);
  auto f = LowerToPrimFunc(w);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const ir::Block* out = FindBlock(*f, "out");
  ASSERT_NE(out, nullptr);
  std::string own;
  for (size_t d = 0; d < out->iter_vars.size(); ++d) own += (d ? ", " : "") + out->iter_vars[d].var.name();
  const std::vector<std::string> loads = LoadsOf(out, "acc");
  ASSERT_FALSE(loads.empty());
  for (const std::string& at : loads) EXPECT_EQ(at, own);
  Schedule sch(*f);
  auto acc = sch.GetBlock("acc");
  ASSERT_TRUE(acc.ok());
  auto loops = sch.GetLoops(*acc);
  ASSERT_TRUE(loops.ok() && !loops->empty());
  auto epilogue = sch.GetBlock("out");
  ASSERT_TRUE(epilogue.ok());
  Status placed = sch.ReverseComputeAt(*epilogue, loops->front());
  ASSERT_TRUE(placed.ok()) << placed.ToString();
  testing::ExpectCompiledEqualsInterpreted(w);
  // The placed program against the default one, both interpreted.
  std::mt19937_64 rng(5);
  std::vector<HostBuffer> ref, got;
  std::vector<HostBuffer*> ref_ptrs, got_ptrs;
  for (size_t i = 0; i < f->params.size(); ++i) {
    ref.push_back(HostBuffer::Like(f->params[i]));
    if (i < f->num_inputs) ref.back().FillRandom(rng);
    got.push_back(HostBuffer::Like(f->params[i]));
    std::memcpy(got.back().data(), ref.back().data(), size_t(ref.back().size_bytes()));
  }
  for (size_t i = 0; i < ref.size(); ++i) {
    ref_ptrs.push_back(&ref[i]);
    got_ptrs.push_back(&got[i]);
  }
  ASSERT_TRUE(Interpret(*f, ref_ptrs).ok());
  Status run = Interpret(sch.func(), got_ptrs);
  ASSERT_TRUE(run.ok()) << run.ToString();
  CompareResult cmp = CompareBuffers(got.back(), ref.back(), 1e-5, 1e-5);
  EXPECT_TRUE(cmp.equal) << cmp.message;
}

TEST(EpilogueRead, ConvolutionWithResidualAddReadsItsAccumulatorInPlace) {
  struct Shape {
    int64_t c, k, h, w;
  };
  for (Shape s : {Shape{7, 17, 1, 103}, Shape{1, 101, 7, 1}, Shape{17, 7, 17, 7}}) {
    SCOPED_TRACE("c " + std::to_string(s.c) + " k " + std::to_string(s.k) + " h " + std::to_string(s.h) + " w " +
                 std::to_string(s.w));
    ExpectEpilogueFusible(ConvAddRelu(s.c, s.k, s.h, s.w));
  }
}

TEST(EpilogueRead, BatchOneDenseWithResidualAddReadsItsAccumulatorInPlace) {
  for (auto [k, n] : {std::pair<int64_t, int64_t>{7, 17}, {101, 1}, {1, 103}}) {
    SCOPED_TRACE("k " + std::to_string(k) + " n " + std::to_string(n));
    ExpectEpilogueFusible(DenseAddRelu(k, n));
  }
}

}  // namespace
}  // namespace tunefarm::frontend
