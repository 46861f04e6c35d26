// A measurement's error kind through every mapping it takes on its way to the
// log, all generated from the list in common/error_kinds.h: its name
// (MeasureErrorKindName), the runner's JSON frame (worker/protocol.h), the
// wire (rpc/convert.h, tunefarm.v1.MeasureError), and the log's kind it is
// recorded as (RecordedErrorKind, what the tuning loop stores). The wire
// numbers are pinned here: workers of older versions send them.
#include <gtest/gtest.h>

#include <iterator>
#include <string>

#include "../../worker/protocol.h"
#include "tunefarm/common/error_kinds.h"
#include "tunefarm/database/record.h"
#include "tunefarm/measure/measure.h"
#include "tunefarm/rpc/convert.h"

namespace tunefarm {
namespace {

struct Pinned {
  MeasureErrorKind kind;
  int wire;  // tunefarm.v1.MeasureError: never changes
  const char* name;
  database::ErrorKind recorded_as;
};
constexpr Pinned kPinned[] = {
    {MeasureErrorKind::kNone, 0, "none", database::ErrorKind::kNone},
    {MeasureErrorKind::kInvalidCandidate, 1, "invalid_candidate", database::ErrorKind::kCompileError},
    {MeasureErrorKind::kCompileError, 2, "compile_error", database::ErrorKind::kCompileError},
    {MeasureErrorKind::kRuntimeError, 3, "runtime_error", database::ErrorKind::kRuntimeError},
    {MeasureErrorKind::kTimeout, 4, "timeout", database::ErrorKind::kTimeout},
    {MeasureErrorKind::kWrongResult, 5, "wrong_result", database::ErrorKind::kWrongResult},
    {MeasureErrorKind::kWorkerLost, 6, "worker_lost", database::ErrorKind::kWorkerLost},
};

#define TF_COUNT_KIND_(...) +1
constexpr size_t kMeasuredKinds = 0 TF_MEASURE_ERROR_KINDS(TF_COUNT_KIND_);
#undef TF_COUNT_KIND_

TEST(ErrorKindMappingsTest, EveryMeasuredKindRoundTripsThroughItsNameTheRunnerTheWireAndTheLog) {
  ASSERT_EQ(std::size(kPinned), kMeasuredKinds) << "a measured kind was added: pin its wire number here";
  for (const Pinned& p : kPinned) {
    SCOPED_TRACE(p.name);
    EXPECT_EQ(static_cast<int>(p.kind), p.wire);
    EXPECT_STREQ(MeasureErrorKindName(p.kind), p.name);

    MeasureResult result;
    result.candidate_id = "c";
    result.error = p.kind;
    // The runner's JSON frame, by name.
    nlohmann::json frame = worker_protocol::ToJson(result);
    EXPECT_EQ(frame["error"], p.name);
    EXPECT_EQ(worker_protocol::ResultFromJson(frame).error, p.kind);
    EXPECT_EQ(worker_protocol::ErrorKindFromName(p.name), p.kind);
    // The wire, by number.
    v1::MeasureResult wire = rpc::ToProto(result);
    EXPECT_EQ(static_cast<int>(wire.error()), p.wire);
    EXPECT_EQ(rpc::FromProto(wire).error, p.kind);
    // The log: the kind it is recorded as, and that kind's name back.
    const database::ErrorKind recorded = RecordedErrorKind<database::ErrorKind>(p.kind);
    EXPECT_EQ(recorded, p.recorded_as);
    auto parsed = database::ParseErrorKind(database::ErrorKindName(recorded));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, recorded);
  }
}

TEST(ErrorKindMappingsTest, WhatNoMappingKnowsIsAWorkerLost) {
  v1::MeasureResult wire;
  wire.set_error(static_cast<v1::MeasureError>(99));  // a newer peer's kind
  EXPECT_EQ(rpc::FromProto(wire).error, MeasureErrorKind::kWorkerLost);
  EXPECT_EQ(worker_protocol::ErrorKindFromName("melted"), MeasureErrorKind::kWorkerLost);
  EXPECT_STREQ(MeasureErrorKindName(static_cast<MeasureErrorKind>(99)), "unknown");
  EXPECT_EQ(RecordedErrorKind<database::ErrorKind>(static_cast<MeasureErrorKind>(99)), database::ErrorKind::kOther);
}

}  // namespace
}  // namespace tunefarm
