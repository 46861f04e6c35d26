// The expert schedules of bench/expert, checked against the reference
// interpreter on small shapes (the benchmark checks full size against oneDNN).
#include <gtest/gtest.h>

#include <cstring>

#include "expert_schedules.h"
#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/interpreter/interpreter.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/workload/workload_parser.h"

namespace tunefarm::bench {
namespace {

void ExpectScheduledMatchesInterpreter(const std::string& file, const std::map<std::string, int64_t>& overrides,
                                       Result<ir::PrimFunc> (*schedule)(const ir::PrimFunc&, std::string*)) {
  ParseOptions options;
  options.param_overrides = overrides;
  auto w = ParseWorkloadFile(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/" + file, options);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  ASSERT_TRUE(f.ok());
  std::string trace;
  auto scheduled = schedule(*f, &trace);
  ASSERT_TRUE(scheduled.ok()) << scheduled.status().ToString();
  EXPECT_NE(trace.find("cache_write"), std::string::npos) << trace;
  auto kernel = JitCompile(*scheduled, Target::Host());
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString() << "\n" << ir::ToString(*scheduled);
  std::mt19937_64 rng(5);
  std::vector<HostBuffer> ref, got;
  for (size_t i = 0; i < f->params.size(); ++i) {
    ref.push_back(HostBuffer::Like(f->params[i]));
    if (i < f->num_inputs) ref.back().FillRandom(rng);
    got.push_back(HostBuffer::Like(f->params[i]));
    if (i < f->num_inputs) std::memcpy(got.back().data(), ref.back().data(), size_t(ref.back().size_bytes()));
  }
  std::vector<HostBuffer*> ref_ptrs;
  std::vector<void*> got_ptrs;
  for (auto& b : ref) ref_ptrs.push_back(&b);
  for (auto& b : got) got_ptrs.push_back(b.data());
  ASSERT_TRUE(Interpret(*f, ref_ptrs).ok());
  ASSERT_TRUE((*kernel)->Run(got_ptrs).ok());
  for (size_t i = f->num_inputs; i < f->params.size(); ++i) {
    CompareResult cmp = CompareBuffers(got[i], ref[i], 1e-4, 1e-4);
    EXPECT_TRUE(cmp.equal) << file << ": " << cmp.message;
  }
  // The scheduled program itself also interprets to the same answer.
  std::vector<HostBuffer> again;
  std::vector<HostBuffer*> again_ptrs;
  for (size_t i = 0; i < f->params.size(); ++i) {
    again.push_back(HostBuffer::Like(f->params[i]));
    if (i < f->num_inputs) std::memcpy(again.back().data(), ref[i].data(), size_t(ref[i].size_bytes()));
  }
  for (auto& b : again) again_ptrs.push_back(&b);
  ASSERT_TRUE(Interpret(*scheduled, again_ptrs).ok());
  for (size_t i = f->num_inputs; i < f->params.size(); ++i) {
    EXPECT_TRUE(CompareBuffers(again[i], ref[i], 1e-4, 1e-4).equal);
  }
}

TEST(ExpertSchedulesTest, GmmTileMatchesTheInterpreter) {
  ExpectScheduledMatchesInterpreter("gmm_1024.tf", {{"M", 32}, {"N", 64}, {"K", 24}}, ScheduleGmm);
}

TEST(ExpertSchedulesTest, GmmWithPartialTilesMatchesTheInterpreter) {
  // 20 rows and 40 columns leave partial register tiles: guarded blocks.
  ExpectScheduledMatchesInterpreter("gmm_1024.tf", {{"M", 20}, {"N", 40}, {"K", 9}}, ScheduleGmm);
}

TEST(ExpertSchedulesTest, C2dRowTileMatchesTheInterpreter) {
  ExpectScheduledMatchesInterpreter("c2d_resnet_3x3.tf", {{"C", 4}, {"H", 6}, {"W", 14}, {"K", 32}}, ScheduleC2d);
}

}  // namespace
}  // namespace tunefarm::bench
