// An MPI recording's calls as the trace side reads them (trace format 1.5): sends matched to their
// receives, collectives grouped into instances, happened-before violations counted, and kron rpt's
// message rows. kron merge (src/merge/) and every consumer of a Timeline (the exports, kron rpt) use them.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "analysis/matcher.hpp"
#include "kron/core/record.hpp"

namespace kron::analysis {

// One MPI call of the merged job, with its times on the common timeline.
struct MpiEvent {
  record::MpiRecord rec;    // timestamp, end: aligned (then corrected) times
  std::uint32_t input = 0;  // which input file
};

struct Matching {
  std::vector<std::pair<std::size_t, std::size_t>> pairs;  // (send, receive) indices into the events
  std::uint64_t unmatched_sends = 0, unmatched_recvs = 0;
  // Collective instances: the events of one call on one communicator, every member's.
  std::vector<std::vector<std::size_t>> collectives;
  std::uint64_t incomplete_collectives = 0;  // instances missing a member's record
};
// ERRATUM E208: the k-th send from A to B on (communicator, tag), in A's posting order, is received by the
// k-th receive of B that received from A on (communicator, tag), in B's posting order.
Matching match_messages(std::span<const MpiEvent> events);

// Happened-before violations: pairs whose receive ended before the send began, collective members that
// ended before the last member they depend on entered (E206).
std::uint64_t count_violations(std::span<const MpiEvent> events, const Matching& m);

// What a member of a call waits for and gives (E206): a sender's begin is what a receiver's end depends on.
enum class MpiRole { None, Sender, Receiver, Both };
MpiRole mpi_role(const record::MpiRecord& r);
inline bool mpi_sends(MpiRole r) { return r == MpiRole::Sender || r == MpiRole::Both; }
inline bool mpi_receives(MpiRole r) { return r == MpiRole::Receiver || r == MpiRole::Both; }

// kron rpt's class-4 rows of an MPI recording (003 section 3.5, class 4: "message send/receive latency",
// a send on one node, its receive on another): each matched message is one interval from its send's
// begin to its receive's end, by sender and receiver rank (worlds of up to 16 ranks) and for all. A pair
// whose receive ended before its send began (files not merged, or merged with --no-clc) is counted as an
// unmatched end, never as a duration (ERRATUM E210).
struct MessageRow {
  std::string name;
  Stats stats;
};
std::vector<MessageRow> message_rows(std::span<const MpiEvent> events, const Matching& m, bool histograms);

}  // namespace kron::analysis
