// MPI message matching (mpi_match.hpp, ERRATUM E208) and kron rpt's message rows (E210).
#include "analysis/mpi_match.hpp"

#include <fmt/core.h>

#include <map>
#include <tuple>

namespace kron::analysis {

using record::MpiCall;
using record::MpiRecord;

// ---- Matching (ERRATUM E208) -------------------------------------------------------------------------
namespace {
using Key = std::tuple<std::uint32_t, std::int32_t, std::uint32_t, std::int32_t>;  // sender, receiver, comm, tag

// Who a collective's end waits for (E206): every member's entry, or the root's; whose end it is.
MpiRole collective_role(MpiCall c, bool root) {
  // A non-blocking collective depends as its blocking form does: its begin is its posting, its end the
  // completion (ERRATUM E433).
  switch (c) {
    case MpiCall::Bcast:
    case MpiCall::Scatter:
    case MpiCall::Scatterv:
    case MpiCall::Ibcast:
    case MpiCall::Iscatter:
    case MpiCall::Iscatterv: return root ? MpiRole::Both : MpiRole::Receiver;
    case MpiCall::Reduce:
    case MpiCall::Gather:
    case MpiCall::Gatherv:
    case MpiCall::Ireduce:
    case MpiCall::Igather:
    case MpiCall::Igatherv: return root ? MpiRole::Both : MpiRole::Sender;
    // A prefix: member i waits for members 0..i in the communicator's order, which the records do not
    // carry (only world ranks): no dependency is claimed (ERRATUM E434).
    case MpiCall::Scan:
    case MpiCall::Exscan: return MpiRole::None;
    // Barrier, Allreduce, Allgather(v), Alltoall(v), Reduce_scatter(_block) and their non-blocking forms:
    // everyone's data reaches everyone.
    default: return MpiRole::Both;
  }
}
}  // namespace

MpiRole mpi_role(const MpiRecord& r) { return collective_role(r.call, r.peer >= 0 && std::uint32_t(r.peer) == r.rank); }

Matching match_messages(std::span<const MpiEvent> events) {
  Matching m;
  std::map<Key, std::vector<std::size_t>> send_q, recv_q;
  std::map<std::pair<std::uint32_t, std::int32_t>, std::vector<std::size_t>> coll;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const MpiRecord& r = events[i].rec;
    if (record::mpi_is_send(r.call))
      send_q[{r.rank, r.peer, r.comm, r.tag}].push_back(i);
    else if (record::mpi_is_recv(r.call))
      recv_q[{static_cast<std::uint32_t>(r.peer), static_cast<std::int32_t>(r.rank), r.comm, r.tag}].push_back(i);
    else if (record::mpi_is_collective(r.call))
      coll[{r.comm, r.tag}].push_back(i);
  }
  auto by_post = [&](std::size_t a, std::size_t b) {
    return std::tie(events[a].rec.timestamp, a) < std::tie(events[b].rec.timestamp, b);
  };
  for (auto& [key, sq] : send_q) {
    std::stable_sort(sq.begin(), sq.end(), by_post);
    auto f = recv_q.find(key);
    std::size_t n = 0;
    if (f != recv_q.end()) {
      std::stable_sort(f->second.begin(), f->second.end(), by_post);
      n = std::min(sq.size(), f->second.size());
      for (std::size_t k = 0; k < n; ++k) m.pairs.emplace_back(sq[k], f->second[k]);
      m.unmatched_recvs += f->second.size() - n;
      recv_q.erase(f);
    }
    m.unmatched_sends += sq.size() - n;
  }
  for (auto& [key, rq] : recv_q) m.unmatched_recvs += rq.size();
  for (auto& [key, members] : coll) {
    // One record per member: a communicator id shared by two communicators of the same members
    // (E203) is told apart only by the sequence numbers, so a duplicate member ends the instance.
    std::sort(members.begin(), members.end(),
              [&](std::size_t a, std::size_t b) { return events[a].rec.rank < events[b].rec.rank; });
    const bool dup = std::adjacent_find(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
                       return events[a].rec.rank == events[b].rec.rank;
                     }) != members.end();
    if (dup || members.size() != events[members.front()].rec.comm_size) ++m.incomplete_collectives;
    if (!dup) m.collectives.push_back(std::move(members));
  }
  return m;
}

std::uint64_t count_violations(std::span<const MpiEvent> events, const Matching& m) {
  std::uint64_t v = 0;
  for (const auto& [s, r] : m.pairs)
    if (events[r].rec.end < events[s].rec.timestamp) ++v;
  for (const auto& inst : m.collectives) {
    std::uint64_t last_in = 0;
    for (std::size_t i : inst)
      if (mpi_sends(mpi_role(events[i].rec))) last_in = std::max(last_in, events[i].rec.timestamp);
    for (std::size_t i : inst)
      if (mpi_receives(mpi_role(events[i].rec)) && events[i].rec.end < last_in) ++v;
  }
  return v;
}

// ---- kron rpt's message rows (ERRATUM E210) ------------------------------------------------------------
std::vector<MessageRow> message_rows(std::span<const MpiEvent> events, const Matching& m, bool histograms) {
  std::vector<MessageRow> rows;
  if (m.pairs.empty() && m.unmatched_sends == 0 && m.unmatched_recvs == 0) return rows;
  std::uint32_t world = 0;
  for (const auto& e : events) world = std::max(world, e.rec.rank + 1);
  const bool per_pair = world <= 16;
  std::map<std::pair<std::uint32_t, std::uint32_t>, Stats> pairs;
  MessageRow all{"MPI messages (all)", {}};
  for (const auto& [si, ri] : m.pairs) {
    const MpiRecord& s = events[si].rec;
    const MpiRecord& r = events[ri].rec;
    Stats* p = per_pair ? &pairs[{s.rank, r.rank}] : nullptr;
    if (r.end < s.timestamp) {
      ++all.stats.unmatched_ends;
      if (p) ++p->unmatched_ends;
      continue;
    }
    all.stats.add(r.end - s.timestamp, histograms);
    if (p) p->add(r.end - s.timestamp, histograms);
  }
  all.stats.unmatched_starts += m.unmatched_sends;
  all.stats.unmatched_ends += m.unmatched_recvs;
  for (auto& [k, st] : pairs)
    rows.push_back({"MPI message " + std::to_string(k.first) + "->" + std::to_string(k.second), std::move(st)});
  rows.push_back(std::move(all));
  return rows;
}

}  // namespace kron::analysis
