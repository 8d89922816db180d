// Test helper: MPI records (trace format 1.5, include/kron/core/record.hpp) as libkron_mpi writes them, for
// tests that build rank files or feed kron merge's pieces without MPI.
#pragma once
#include <cstdint>

#include "kron/board.hpp"
#include "kron/core/record.hpp"

namespace kron::testing {

// Rank `rank`'s call `c` on communicator `comm` (comm_size members) with `peer` and `tag`, from t0 to t1;
// its process is pid 100 + rank on node `rank`, its thread 100 + rank.
inline record::MpiRecord mpi_call(std::uint32_t rank, record::MpiCall c, std::uint32_t comm, std::uint32_t comm_size,
                                  std::int32_t peer, std::int32_t tag, std::uint64_t t0, std::uint64_t t1,
                                  std::uint64_t bytes = 0) {
  record::MpiRecord m{};
  m.h.kind = record::RecordKind::Mpi;
  m.h.size = sizeof m;
  m.h.group = 0xff;
  m.source = board::source_id(rank, 100 + rank);
  m.thread = 100 + rank;
  m.rank = rank;
  m.call = c;
  m.comm = comm;
  m.comm_size = comm_size;
  m.peer = peer;
  m.tag = tag;
  m.timestamp = t0;
  m.end = t1;
  m.bytes = bytes;
  return m;
}

// A clock-offset measurement of rank `rank`: its clock read `local` while rank 0's read `reference`.
inline record::ClockOffsetRecord clock_offset(std::uint32_t rank, std::uint64_t local, std::uint64_t reference,
                                              std::uint64_t rtt, std::uint64_t exchanges = 10) {
  record::ClockOffsetRecord c{};
  c.h.kind = record::RecordKind::ClockOffset;
  c.h.size = sizeof c;
  c.h.group = 0xff;
  c.rank = rank;
  c.timestamp = local;
  c.reference = reference;
  c.rtt = rtt;
  c.exchanges = exchanges;
  return c;
}

}  // namespace kron::testing
