// MPI message matching (mpi_match.hpp, ERRATUM E208) and kron rpt's message rows (E210).
#include "analysis/mpi_match.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace kron::analysis {

using record::MpiCall;
using record::MpiRecord;

// ---- Matching (ERRATUM E208) -------------------------------------------------------------------------
namespace {
using Key = std::tuple<std::uint32_t, std::int32_t, std::uint32_t, std::int32_t>;  // sender, receiver, comm, tag

// What a collective member gives and waits for (DECISION D12). MPI 4.0 section 6.1: "a collective operation
// may, or may not, have the effect of synchronizing all calling processes", except MPI_Barrier (section 6.3:
// it "blocks the caller until all group members have called it"); what a member cannot do is finish with data
// that no one has yet given it. So a member's end depends only on the begins of the members whose data its
// result holds, and a member that moves no data (bytes 0: count 0 or a type of size 0) gives none. A
// non-blocking collective depends as its blocking form does, between posting and completion (section 6.12,
// ERRATUM E433). `bytes` is this member's send buffer, a scatter's its own share (E434).
MpiRole collective_role(MpiCall c, bool root, bool data) {
  switch (c) {
    case MpiCall::Barrier:
    case MpiCall::Ibarrier: return MpiRole::Both;
    // One to all: the root's data reaches each member that receives some; the root waits for no one.
    case MpiCall::Bcast:
    case MpiCall::Scatter:
    case MpiCall::Scatterv:
    case MpiCall::Ibcast:
    case MpiCall::Iscatter:
    case MpiCall::Iscatterv: return root ? MpiRole::Sender : data ? MpiRole::Receiver : MpiRole::None;
    // All to one: each member that sends some reaches the root.
    case MpiCall::Reduce:
    case MpiCall::Gather:
    case MpiCall::Gatherv:
    case MpiCall::Ireduce:
    case MpiCall::Igather:
    case MpiCall::Igatherv: return root ? MpiRole::Receiver : data ? MpiRole::Sender : MpiRole::None;
    // A prefix: member i's result holds members 0..i's data; said pair by pair (Matching::ordered).
    case MpiCall::Scan:
    case MpiCall::Exscan: return MpiRole::None;
    // Allreduce, Allgather(v), Alltoall(v), Reduce_scatter(_block) and their non-blocking forms: every
    // member's data reaches every member.
    default: return data ? MpiRole::Both : MpiRole::Receiver;
  }
}

// A communicator whose ranks are in world order: MPI_COMM_WORLD, or one whose id (ERRATUM E203: FNV-1a of its
// members' world ranks in its own rank order) is that of `members` in world order.
bool in_world_order(std::span<const MpiEvent> events, const std::vector<std::size_t>& members) {
  const std::uint32_t comm = events[members.front()].rec.comm;
  if (comm == 0) return true;
  std::uint32_t h = 2166136261u;
  for (std::size_t i : members)
    for (int b = 0; b < 4; ++b) h = (h ^ ((events[i].rec.rank >> (8 * b)) & 0xffu)) * 16777619u;
  return (h ? h : 1) == comm;
}

// DECISION D12: Scan and Exscan, member j's end after the begin of each member i < j (communicator order)
// that gives data; said only where that order is known (world order) and for up to kMaxPrefixMembers members
// (the pairs grow as the square of the members).
constexpr std::size_t kMaxPrefixMembers = 64;
void prefix_dependencies(std::span<const MpiEvent> events, const std::vector<std::size_t>& members, Matching& m) {
  const MpiCall c = events[members.front()].rec.call;
  if ((c != MpiCall::Scan && c != MpiCall::Exscan) || members.size() > kMaxPrefixMembers ||
      !in_world_order(events, members))
    return;
  for (std::size_t i = 0; i < members.size(); ++i)
    if (events[members[i]].rec.bytes)
      for (std::size_t j = i + 1; j < members.size(); ++j) m.ordered.emplace_back(members[i], members[j]);
}
}  // namespace

MpiRole mpi_role(const MpiRecord& r) {
  return collective_role(r.call, r.peer >= 0 && std::uint32_t(r.peer) == r.rank, r.bytes != 0);
}

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
      m.unmatched_recv_events.insert(m.unmatched_recv_events.end(), f->second.begin() + std::ptrdiff_t(n),
                                     f->second.end());
      recv_q.erase(f);
    }
    m.unmatched_sends += sq.size() - n;
  }
  for (auto& [key, rq] : recv_q) {
    std::stable_sort(rq.begin(), rq.end(), by_post);
    m.unmatched_recvs += rq.size();
    m.unmatched_recv_events.insert(m.unmatched_recv_events.end(), rq.begin(), rq.end());
  }
  std::sort(m.unmatched_recv_events.begin(), m.unmatched_recv_events.end(), by_post);
  for (auto& [key, members] : coll) {
    // One record per member: a communicator id shared by two communicators of the same members
    // (E203) is told apart only by the sequence numbers, so a duplicate member ends the instance.
    std::sort(members.begin(), members.end(),
              [&](std::size_t a, std::size_t b) { return events[a].rec.rank < events[b].rec.rank; });
    const bool dup = std::adjacent_find(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
                       return events[a].rec.rank == events[b].rec.rank;
                     }) != members.end();
    if (dup || members.size() != events[members.front()].rec.comm_size) {
      ++m.incomplete_collectives;
      m.incomplete.push_back(members);
    } else {
      prefix_dependencies(events, members, m);
    }
    if (!dup) m.collectives.push_back(std::move(members));
  }
  return m;
}

std::vector<Violation> find_violations(std::span<const MpiEvent> events, const Matching& m,
                                       std::span<const std::uint32_t> clock_of_input) {
  std::vector<Violation> v;
  for (const auto& [s, r] : m.pairs)
    if (events[r].rec.end < events[s].rec.timestamp) v.push_back({s, r});
  for (const auto& [s, r] : m.ordered)
    if (events[r].rec.end < events[s].rec.timestamp) v.push_back({s, r});
  auto clock_of = [&](std::size_t i) -> std::uint32_t {
    const std::uint32_t in = events[i].input;
    return in < clock_of_input.size() ? clock_of_input[in] : in;
  };
  for (const auto& inst : m.collectives) {
    LatestByClock last;  // the latest begin of the members that give data
    for (std::size_t i : inst)
      if (mpi_sends(mpi_role(events[i].rec))) last.add(events[i].rec.timestamp, i, clock_of(i));
    for (std::size_t i : inst) {
      if (!mpi_receives(mpi_role(events[i].rec)) || last.first.item == ~std::size_t{0}) continue;
      const std::uint64_t end = events[i].rec.end;
      const auto& other = last.except(clock_of(i));
      if (other.item != ~std::size_t{0} && end < other.value)
        v.push_back({other.item, i});
      else if (end < last.first.value)
        v.push_back({last.first.item, i});
    }
  }
  return v;
}

const char* mpi_call_name(MpiCall c) {
  switch (c) {
    case MpiCall::Send: return "MPI_Send";
    case MpiCall::Recv: return "MPI_Recv";
    case MpiCall::Isend: return "MPI_Isend";
    case MpiCall::Irecv: return "MPI_Irecv";
    case MpiCall::SendrecvSend: return "MPI_Sendrecv (send)";
    case MpiCall::SendrecvRecv: return "MPI_Sendrecv (receive)";
    case MpiCall::Mrecv: return "MPI_Mrecv";
    case MpiCall::Imrecv: return "MPI_Imrecv";
    case MpiCall::PsendStart: return "MPI_Start (send)";
    case MpiCall::PrecvStart: return "MPI_Start (receive)";
    case MpiCall::Barrier: return "MPI_Barrier";
    case MpiCall::Bcast: return "MPI_Bcast";
    case MpiCall::Reduce: return "MPI_Reduce";
    case MpiCall::Allreduce: return "MPI_Allreduce";
    case MpiCall::Gather: return "MPI_Gather";
    case MpiCall::Allgather: return "MPI_Allgather";
    case MpiCall::Scatter: return "MPI_Scatter";
    case MpiCall::Alltoall: return "MPI_Alltoall";
    case MpiCall::Gatherv: return "MPI_Gatherv";
    case MpiCall::Scatterv: return "MPI_Scatterv";
    case MpiCall::Allgatherv: return "MPI_Allgatherv";
    case MpiCall::Alltoallv: return "MPI_Alltoallv";
    case MpiCall::ReduceScatter: return "MPI_Reduce_scatter";
    case MpiCall::ReduceScatterBlock: return "MPI_Reduce_scatter_block";
    case MpiCall::Scan: return "MPI_Scan";
    case MpiCall::Exscan: return "MPI_Exscan";
    case MpiCall::Ibarrier: return "MPI_Ibarrier";
    case MpiCall::Ibcast: return "MPI_Ibcast";
    case MpiCall::Ireduce: return "MPI_Ireduce";
    case MpiCall::Iallreduce: return "MPI_Iallreduce";
    case MpiCall::Igather: return "MPI_Igather";
    case MpiCall::Iallgather: return "MPI_Iallgather";
    case MpiCall::Iscatter: return "MPI_Iscatter";
    case MpiCall::Ialltoall: return "MPI_Ialltoall";
    case MpiCall::Igatherv: return "MPI_Igatherv";
    case MpiCall::Iscatterv: return "MPI_Iscatterv";
    case MpiCall::Iallgatherv: return "MPI_Iallgatherv";
    case MpiCall::Ialltoallv: return "MPI_Ialltoallv";
  }
  return "MPI (unknown call)";
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
