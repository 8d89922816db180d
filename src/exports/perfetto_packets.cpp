// The Perfetto export's packets (perfetto_packets.hpp).
#include "exports/perfetto_packets.hpp"

#include <fmt/core.h>

#include "exports/protowire.hpp"
#include "kron/board.hpp"
#include "kron/core/text.hpp"

namespace kron::exports::perfetto {

std::uint32_t& EventIids::slot(std::uint64_t ev) {
  if (keys_.empty()) {
    keys_.resize(kSlots);
    iids_.resize(kSlots, 0);
  }
  std::size_t i = (ev * 0x9E3779B97F4A7C15ull) >> (64 - kBits);
  while (iids_[i] && keys_[i] != ev) i = (i + 1) & (kSlots - 1);
  keys_[i] = ev;
  return iids_[i];
}

std::size_t Packets::packet_at(Sequence& s, std::uint64_t t_ns, bool absolute) {
  const std::size_t p = pb::open(b_, kTracePacket);
  if (!absolute && t_ns >= s.last_ns) {
    pb::uint_field(b_, kPktTimestamp, t_ns - s.last_ns);
    s.last_ns = t_ns;
  } else {
    pb::uint_field(b_, kPktTimestamp, t_ns);
    pb::uint_field(b_, kPktClockId, kClockBoottime);
  }
  pb::uint_field(b_, kPktSequenceId, s.seq);
  return p;
}

void Packets::sequence_start(const Sequence& s, std::uint32_t flags, std::uint64_t debug_iid, std::string_view debug) {
  const std::size_t p = pb::open(b_, kTracePacket);
  pb::uint_field(b_, kPktSequenceId, s.seq);
  pb::uint_field(b_, kPktSequenceFlags, flags);
  if (debug_iid) intern_debug_name(debug_iid, debug);
  pb::close(b_, p);
}

std::pair<std::size_t, std::size_t> Packets::descriptor(const Sequence& s) {
  const std::size_t p = pb::open(b_, kTracePacket);
  pb::uint_field(b_, kPktSequenceId, s.seq);
  return {p, pb::open(b_, kPktTrackDescriptor)};
}

void Packets::end_descriptor(std::pair<std::size_t, std::size_t> p) {
  pb::close(b_, p.second);
  pb::close(b_, p.first);
}

std::uint32_t Packets::intern(Sequence& s, std::uint32_t& slot, std::string_view name) {
  if (slot) return slot;
  if (s.next_iid > kMaxInterned) return 0;
  slot = s.next_iid++;
  const std::size_t id = pb::open(b_, kPktInternedData);
  const std::size_t en = pb::open(b_, kIdEventNames);
  pb::uint_field(b_, kEnIid, slot);
  pb::bytes_field(b_, kEnName, text::utf8_safe(name));
  pb::close(b_, en);
  pb::close(b_, id);
  return slot;
}

void Packets::name_field(std::uint32_t iid, std::string_view name, bool ascii) {
  if (iid)
    pb::uint_field(b_, kTeNameIid, iid);
  else if (ascii)
    pb::bytes_field(b_, kTeName, name);
  else
    pb::bytes_field(b_, kTeName, text::utf8_safe(name));
}

void Packets::intern_debug_name(std::uint64_t iid, std::string_view name) {
  const std::size_t id = pb::open(b_, kPktInternedData);
  const std::size_t dn = pb::open(b_, kIdDebugNames);
  pb::uint_field(b_, kDanIid, iid);
  pb::bytes_field(b_, kDanName, name);
  pb::close(b_, dn);
  pb::close(b_, id);
}

void Packets::debug_uint(std::string_view name, std::uint64_t v) {
  const std::size_t da = pb::open(b_, kTeDebug);
  pb::bytes_field(b_, kDaName, name);
  pb::uint_field(b_, kDaUint, v);
  pb::close(b_, da);
}

void Packets::debug_uint(std::uint64_t iid, std::uint64_t v) {
  const std::size_t da = pb::open(b_, kTeDebug);
  pb::uint_field(b_, kDaNameIid, iid);
  pb::uint_field(b_, kDaUint, v);
  pb::close(b_, da);
}

void Packets::debug_int(std::uint64_t iid, std::int64_t v) {
  const std::size_t da = pb::open(b_, kTeDebug);
  pb::uint_field(b_, kDaNameIid, iid);
  pb::int_field(b_, kDaInt, v);
  pb::close(b_, da);
}

std::size_t Packets::track_event(std::uint32_t type) {
  const std::size_t te = pb::open(b_, kPktTrackEvent);
  pb::uint_field(b_, kTeType, type);
  return te;
}

void Packets::track_event_end(std::size_t te, std::size_t p) {
  pb::close(b_, te);
  pb::close(b_, p);
}

std::uint64_t Packets::process_track(Sequence& s, std::uint32_t source, const analysis::Timeline& tl) {
  auto [pit, fresh] = process_uuid_.try_emplace(source, kProcessUuidBase + process_uuid_.size());
  if (fresh) {
    const std::string label = text::utf8_safe(tl.process_label(source));
    auto d = descriptor(s);
    pb::uint_field(b_, kTdUuid, pit->second);
    pb::bytes_field(b_, kTdName, label);
    const std::size_t pd = pb::open(b_, kTdProcess);
    pb::int_field(b_, kPdPid, board::source_pid(source));
    pb::bytes_field(b_, kPdName, label);
    pb::close(b_, pd);
    end_descriptor(d);
  }
  return pit->second;
}

void Packets::child_track(const Sequence& s, std::uint64_t uuid, std::uint64_t parent, std::string_view name,
                          const char* counter_unit) {
  auto d = descriptor(s);
  pb::uint_field(b_, kTdUuid, uuid);
  pb::uint_field(b_, kTdParent, parent);
  pb::bytes_field(b_, kTdName, text::utf8_safe(name));
  if (counter_unit) {
    const std::size_t cd = pb::open(b_, kTdCounter);
    if (*counter_unit) pb::bytes_field(b_, kCdUnitName, counter_unit);
    pb::close(b_, cd);
  }
  end_descriptor(d);
}

}  // namespace kron::exports::perfetto
