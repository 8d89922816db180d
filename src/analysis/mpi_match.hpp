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
  std::vector<std::size_t> unmatched_recv_events;  // the receives without a send, by event index
  // Collective instances: the events of one call on one communicator, every member's.
  std::vector<std::vector<std::size_t>> collectives;
  std::uint64_t incomplete_collectives = 0;          // instances missing a member's record
  std::vector<std::vector<std::size_t>> incomplete;  // the members found of each of those
  // (a, b): a's begin happens before b's end, for the dependencies of a prefix reduction (Scan, Exscan) that
  // the per-instance roles cannot say (DECISION D12).
  std::vector<std::pair<std::size_t, std::size_t>> ordered;
};
// ERRATUM E208: the k-th send from A to B on (communicator, tag), in A's posting order, is received by the
// k-th receive of B that received from A on (communicator, tag), in B's posting order.
Matching match_messages(std::span<const MpiEvent> events);

// A happened-before violation: event `after` ended before event `before` began, though its end depends on
// that begin (E206, DECISION D12): a receive and its send, a collective member and the latest member it waits for.
struct Violation {
  std::size_t before, after;
};
// The violations of `events`, one per receive and per waiting collective member. With `clock_of_input` (a
// number per input; DECISION D10), a collective member's is against the latest member on another clock where
// that one is violated, else against the latest of all.
std::vector<Violation> find_violations(std::span<const MpiEvent> events, const Matching& m,
                                       std::span<const std::uint32_t> clock_of_input = {});
inline std::uint64_t count_violations(std::span<const MpiEvent> events, const Matching& m) {
  return find_violations(events, m).size();
}

// What a member of a collective gives and waits for (DECISION D12, MPI 4.0 sections 6.1 and 6.14): a sender's
// begin is what a receiver's end depends on; a member that moves no data (bytes 0) gives nothing, a barrier
// excepted.
enum class MpiRole { None, Sender, Receiver, Both };
MpiRole mpi_role(const record::MpiRecord& r);
inline bool mpi_sends(MpiRole r) { return r == MpiRole::Sender || r == MpiRole::Both; }
inline bool mpi_receives(MpiRole r) { return r == MpiRole::Receiver || r == MpiRole::Both; }

// The latest value seen of each clock's, kept for the two clocks with the latest: the latest of any clock but
// one in O(1) (DECISION D10: a rank never waits for a member on its own clock).
struct LatestByClock {
  struct Entry {
    std::uint64_t value = 0;
    std::size_t item = ~std::size_t{0};  // none
    std::uint32_t clock = ~std::uint32_t{0};
  };
  Entry first, second;  // first.value >= second.value, their clocks differ
  void add(std::uint64_t value, std::size_t item, std::uint32_t clock) {
    if (first.item != ~std::size_t{0} && clock == first.clock) {
      if (value > first.value) first = {value, item, clock};
    } else if (first.item == ~std::size_t{0} || value > first.value) {
      second = first;
      first = {value, item, clock};
    } else if (second.item == ~std::size_t{0} || value > second.value) {
      second = {value, item, clock};
    }
  }
  // The latest of the clocks other than `clock` (item none when there is none).
  const Entry& except(std::uint32_t clock) const { return first.clock != clock ? first : second; }
};

// The MPI function a record comes from ("MPI_Bcast", "MPI_Sendrecv (send)").
const char* mpi_call_name(record::MpiCall c);

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
