// Test helper: a rank's trace file of an MPI job as libkron_mpi writes one (trace format 1.6: samples, a
// scope name, the node name entry, MPI records and clock-offset measurements), for tests of kron merge that
// need no MPI.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "kron/board.hpp"
#include "kron/format/trace_file.hpp"

namespace kron::testing {

struct RankFileSpec {
  std::uint32_t rank = 0, world = 2;
  std::uint64_t t0 = 1000, step = 100;  // samples every `step` ticks from t0 (odd ones named `name_id`)
  int samples = 10;
  std::vector<record::MpiRecord> calls;
  std::vector<record::ClockOffsetRecord> offsets;
  std::string node;            // MPI_Get_processor_name; "" : "node<rank>"
  bool tsc = false;            // a TSC time base (anchors at t0, 1 ppm) instead of the nominal clock
  std::uint16_t name_id = 1;   // the scope "MPI_Send"
  std::vector<Sample> sample_list;  // when not empty: these samples instead of `samples` made ones
};

// Writes the file; its header counts `rank` overruns and passed_filter samples + rank.
inline void write_rank_file(const std::string& path, const RankFileSpec& s) {
  tracefile::FileHeader h = tracefile::make_header();
  h.clock_hz = 1'000'000'000;
  h.start_ticks = s.t0;
  h.node = s.rank;
  h.mpi_rank = s.rank;
  h.mpi_world_size = s.world;
  if (s.tsc) {  // anchors taken at the start only: the rate is the calibration's (ERRATUM E301)
    h.time_source = static_cast<std::uint32_t>(tracefile::TimeSource::Anchors);
    h.rate_uncertainty_ppb = 1000;
    h.anchor0_ticks = s.t0;
    h.anchor0_ns = 5'000'000'000;
  }
  tracefile::Writer w(path, h);
  for (const Sample& x : s.sample_list) w.append(x);
  for (int i = 0; i < (s.sample_list.empty() ? s.samples : 0); ++i) {
    Sample x;
    x.source = board::source_id(s.rank, 100 + s.rank);
    x.thread = 100 + s.rank;
    x.timestamp = s.t0 + std::uint64_t(i) * s.step;
    x.data = i % 2 ? record::named_data(s.name_id, std::uint64_t(i)) : std::uint64_t(i);
    x.flags = i % 2 ? kFlagNamed : 0;
    w.append(x);
  }
  w.append_mpi(s.calls);
  w.append_clock(s.offsets);
  h.overruns = s.rank;  // something lost, counted
  h.passed_filter = (s.sample_list.empty() ? std::uint64_t(s.samples) : s.sample_list.size()) + s.rank;
  record::NameRecord nr{};
  nr.h.kind = record::RecordKind::Names;
  nr.h.size = sizeof nr;
  nr.name_kind = record::NameKind::Scope;
  nr.id = s.name_id;
  std::snprintf(nr.name, sizeof nr.name, "%s", "MPI_Send");
  record::NameRecord node{};
  node.h = nr.h;
  node.name_kind = record::NameKind::Node;
  node.thread = s.rank;
  std::snprintf(node.name, sizeof node.name, "%s",
                s.node.empty() ? ("node" + std::to_string(s.rank)).c_str() : s.node.c_str());
  const record::NameRecord names[] = {nr, node};
  w.finish(h, {}, names);
}

}  // namespace kron::testing
