// The interval matcher: see matcher.hpp.
#include "analysis/matcher.hpp"

#include "analysis/input.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "kron/core/error.hpp"

namespace kron::analysis {

double Stats::stddev() const {
  if (count == 0) return 0.0;
  const double n = static_cast<double>(count);
  return std::sqrt(std::max(0.0, (s2 - s1 * s1 / n) / n));
}

void Stats::merge(const Stats& o) {
  unmatched_starts += o.unmatched_starts;
  unmatched_ends += o.unmatched_ends;
  cut += o.cut;
  lossy = lossy || o.lossy;
  if (o.hist) {
    if (!hist) hist = std::make_unique<Histogram>();
    for (unsigned b = 0; b < Histogram::kBuckets; ++b) hist->counts[b] += o.hist->counts[b];
  }
  if (o.cpu_count) {
    cpu_min = cpu_count ? std::min(cpu_min, o.cpu_min) : o.cpu_min;
    cpu_max = cpu_count ? std::max(cpu_max, o.cpu_max) : o.cpu_max;
    cpu_count += o.cpu_count;
    cpu_total += o.cpu_total;
    cpu_wall += o.cpu_wall;
  }
  if (o.count == 0) return;
  if (count == 0) {
    min = o.min;
    max = o.max;
    shift = o.shift;
  } else {
    min = std::min(min, o.min);
    max = std::max(max, o.max);
  }
  // Re-centre o's sums on this shift: sum(d - a) = sum(d - b) + n (b - a), and the square likewise.
  const double delta = static_cast<double>(static_cast<std::int64_t>(o.shift - shift));
  const double on = static_cast<double>(o.count);
  s1 += o.s1 + on * delta;
  s2 += o.s2 + 2 * delta * o.s1 + on * delta * delta;
  count += o.count;
  total += o.total;
}

std::string rank_label(const Ranks* ranks, std::uint32_t source) {
  const auto r = ranks ? ranks->of(source) : std::nullopt;
  return r ? fmt::format("rank {}", r->rank) : std::string();
}

std::string stream_name(const StreamKey& k, const Ranks* ranks) {
  const std::string rank = rank_label(ranks, k.source);
  return fmt::format("{}{}0x{:08x}/{}{}", rank, rank.empty() ? "" : " ", k.source, k.by_thread ? "tid" : "cpu", k.lane);
}

Matcher::Matcher(const IntervalInfo& info_in, const RptOptions& opt, std::uint64_t ts_mask,
                 const tracefile::NameTable* names)
    : info_(info_in), opt_(opt), ts_mask_(ts_mask) {
  // The named scopes' intervals (E152): one per distinct name, in id order, then "#unnamed".
  {
    std::unordered_map<std::string, unsigned> by_name;
    auto add = [&](const std::string& name, const std::string& location) {
      auto [it, fresh] = by_name.emplace(name, static_cast<unsigned>(info_.intervals.size()));
      if (fresh) {
        Interval iv;
        iv.cls = 1;
        iv.n_names = 1;
        iv.names[0] = name;
        iv.named = true;
        iv.location = location;
        info_.intervals.push_back(std::move(iv));
      }
      return it->second;
    };
    if (names)
      for (std::uint32_t id = 1; id <= names->max_id(); ++id) {
        const tracefile::NameRecord* r = names->site(static_cast<std::uint16_t>(id));
        if (!r) continue;
        if (r->name_kind != record::NameKind::Scope) continue;
        if (named_of_id_.size() <= id) named_of_id_.resize(id + 1, kAll);
        named_of_id_[id] =
            add(std::string(r->name, strnlen(r->name, sizeof r->name)), tracefile::NameTable::location(*r));
      }
    unnamed_interval_ = add("#unnamed", "");
  }
  const IntervalInfo& info = info_;
  if (opt.event_bits < 1 || opt.event_bits > 64)
    throw std::invalid_argument("event size (-e) must be 1 to 64 bits, not " + std::to_string(opt.event_bits));
  event_mask_ = opt.event_bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << opt.event_bits) - 1;
  std::vector<std::vector<Role>> small(kSmall);
  auto add_role = [&](std::uint64_t ev, Role r) {
    if (ev < kSmall)
      small[ev].push_back(r);
    else
      big_roles_[ev].push_back(r);
  };
  for (unsigned i = 0; i < info.intervals.size(); ++i) {
    const Interval& iv = info.intervals[i];
    for (unsigned e = 0; e < iv.n_events; ++e)
      if (iv.events[e] & ~event_mask_)
        throw InputError::at_line(info.path, iv.line, iv.event_column[e],
                                  fmt::format("event {} does not fit in an event number of {} bits (-e {})",
                                              iv.events[e], opt.event_bits, opt.event_bits));
    part_base_.push_back(total_parts_);
    const unsigned parts = iv.cls == 3 ? 3 : iv.cls == 2 ? 2 : 1;
    part_count_.push_back(parts);
    total_parts_ += parts;
    if (iv.named) continue;  // paired by feed_named(), not by event numbers
    auto machine = [&](std::uint64_t start, unsigned start_part,
                       std::initializer_list<std::pair<std::uint64_t, unsigned>> ends) {
      Machine m{i, iv.cls == 4, start_part, 0, {0, 0}};
      const auto idx = static_cast<std::uint32_t>(machines_.size());
      add_role(start, Role{idx, -1});
      for (const auto& [ev, part] : ends) {
        add_role(ev, Role{idx, static_cast<std::int32_t>(m.n_ends)});
        m.end_part[m.n_ends++] = part;
      }
      machines_.push_back(m);
    };
    switch (iv.cls) {
      case 1:
      case 4: machine(iv.events[0], 0, {{iv.events[1], 0}}); break;
      // ERRATUM E44: one machine, two ends; a start never ended is counted on the first outcome's row.
      case 2: machine(iv.events[0], 0, {{iv.events[1], 0}, {iv.events[2], 1}}); break;
      // ERRATUM E44: each of the three rows is matched on its own two events, like class 1: for a clean
      // FIRST MIDDLE LAST sequence the whole is exactly the sum of its sub-intervals.
      case 3:
        machine(iv.events[0], 0, {{iv.events[1], 0}});
        machine(iv.events[1], 1, {{iv.events[2], 1}});
        machine(iv.events[0], 2, {{iv.events[2], 2}});
        break;
    }
  }
  queues_.resize(machines_.size());
  queue_cut_.resize(machines_.size());
  all_.resize(total_parts_);
  small_off_.reserve(kSmall + 1);  // flattened: one small array the lookup touches
  for (const auto& v : small) {
    small_off_.push_back(static_cast<std::uint32_t>(small_flat_.size()));
    small_flat_.insert(small_flat_.end(), v.begin(), v.end());
  }
  small_off_.push_back(static_cast<std::uint32_t>(small_flat_.size()));
}

inline std::span<const Matcher::Role> Matcher::roles(std::uint64_t ev) const {
  if (ev < kSmall) return {small_flat_.data() + small_off_[ev], small_flat_.data() + small_off_[ev + 1]};
  if (big_roles_.empty()) return {};
  const auto it = big_roles_.find(ev);
  return it == big_roles_.end() ? std::span<const Role>{} : std::span<const Role>(it->second);
}

std::uint32_t Matcher::stream_of(const Sample& s) { return stream_one(s); }

inline std::uint32_t Matcher::stream_one(const Sample& s) {
  const StreamKey sk = StreamKey::of(s);
  const std::uint64_t key = sk.key();
  StreamCache& c = stream_cache_[(key * 0x9e3779b97f4a7c15u) >> (64 - kStreamCacheBits)];
  if (c.idx != kAll && c.key == key) return c.idx;
  c.idx = new_stream(sk, key);
  c.key = key;
  return c.idx;
}

// A stream not in the cache: found among those seen, or added.
std::uint32_t Matcher::new_stream(const StreamKey& sk, std::uint64_t key) {
  std::uint32_t idx = static_cast<std::uint32_t>(streams_.size());
  if (streams_.size() <= 16) {  // few streams (one per processor): a linear scan beats hashing
    for (std::uint32_t k = 0; k < stream_keys_.size(); ++k)
      if (stream_keys_[k] == key) {
        idx = k;
        break;
      }
  } else {
    if (stream_index_.empty())
      for (std::uint32_t k = 0; k < stream_keys_.size(); ++k) stream_index_.emplace(stream_keys_[k], k);
    const auto it = stream_index_.find(key);
    if (it != stream_index_.end()) idx = it->second;
  }
  if (idx == streams_.size()) {
    streams_.push_back(sk);
    stream_keys_.push_back(key);
    if (!stream_index_.empty()) stream_index_.emplace(key, idx);
    open_.resize(streams_.size() * machines_.size());
    stats_.resize(streams_.size() * total_parts_);
    losses_.resize(streams_.size());
  }
  return idx;
}

Stats& Matcher::slot(unsigned interval, unsigned part, std::uint32_t stream) {
  const unsigned k = part_base_[interval] + part;
  return stream == kAll ? all_[k] : stats_[std::size_t{stream} * total_parts_ + k];
}

const Stats& Matcher::stats(unsigned interval, unsigned part, std::uint32_t stream) const {
  return const_cast<Matcher*>(this)->slot(interval, part, stream);
}

std::string Matcher::part_name(unsigned interval, unsigned part) const {
  const Interval& iv = info_.intervals[interval];
  if (iv.cls == 3 && part == 2) return class3_total_name(iv);
  return iv.names[part];
}

inline void Matcher::record(const Machine& m, unsigned part, std::uint32_t stream, std::uint32_t start_stream,
                            std::uint64_t start, std::uint64_t end, std::uint64_t cpu0, std::uint64_t cpu1) {
  // ERRATUM E43: modulo the timestamp field's width, so a counter that wrapped gives the right interval.
  const std::uint64_t d = (end - start) & ts_mask_;
  // Classes 1-3 per stream (the row "all" is merged in finish()); class 4 across all streams only.
  Stats& st = slot(m.interval, part, m.global ? kAll : stream);
  st.add(d, opt_.histograms);
  // ERRATUM E140: a counter that went back (reset or re-enabled between the two) gives no on-CPU time.
  if (cpu0 != kNoCpu && cpu1 != kNoCpu && cpu1 >= cpu0)
    st.add_cpu(static_cast<double>(cpu1 - cpu0) * opt_.cpu_scale, d);
  if (on_interval) on_interval(Occurrence{m.interval, part, stream, start_stream, start, end, d});
}

bool Matcher::feed(const Sample& s) { return feed_one(s); }

void Matcher::feed_batch(std::span<const Sample> batch) {
  for (const Sample& s : batch) feed_one(s);
}

bool Matcher::feed_named(const Sample& s) {
  const bool begin = s.flags & kFlagScopeBegin, end = s.flags & kFlagScopeEnd;
  if (!begin && !end) return false;  // a named event: no interval
  ++matched_events_;
  const std::uint32_t stream = stream_one(s);
  if (named_open_.size() <= stream) named_open_.resize(std::size_t{stream} + 1);
  auto& open = named_open_[stream];
  const std::uint16_t id = record::name_id_of(s.data);
  const unsigned iv = named_interval(id);
  const std::uint64_t losses = losses_[stream];
  if (begin) {
    open.push_back(NamedOpen{iv, id, s.timestamp, record::named_value_of(s.data), cpu_of(s)});
    slot(iv, 0, stream).touch(losses);
    return true;
  }
  // ERRATUM E152: the innermost open scope of this id; the scopes opened inside it and never ended are
  // unmatched starts.
  std::size_t k = open.size();
  while (k > 0 && open[k - 1].id != id) --k;
  if (k == 0) {
    orphan_named_end(stream, iv, id);
    return true;
  }
  for (std::size_t j = k; j < open.size(); ++j) ++slot(open[j].interval, 0, stream).unmatched_starts;
  const NamedOpen o = open[k - 1];
  open.resize(k - 1);
  const std::uint64_t d = (s.timestamp - o.t) & ts_mask_;
  Stats& st = slot(iv, 0, stream);
  st.touch(losses);
  st.add(d, opt_.histograms);
  if (const std::uint64_t cpu1 = cpu_of(s); o.cpu != kNoCpu && cpu1 != kNoCpu && cpu1 >= o.cpu)
    st.add_cpu(static_cast<double>(cpu1 - o.cpu) * opt_.cpu_scale, d);
  if (on_interval) {
    Occurrence occ{iv, 0, stream, stream, o.t, s.timestamp, d};
    occ.value = o.value;
    occ.name_id = id;
    on_interval(occ);
  }
  return true;
}

// DECISION D21: an end whose scope is not open. The innermost cut scope of its id (the scopes cut inside
// it ended in the gap): its end, counted when it was cut, nothing more. None, on a stream that lost
// samples: a scope whose begin was lost, a cut. Else an unmatched end (E152).
void Matcher::orphan_named_end(std::uint32_t stream, unsigned iv, std::uint16_t id) {
  Stats& st = slot(iv, 0, stream);
  if (!losses_[stream]) {
    ++st.unmatched_ends;
    return;
  }
  st.touch(losses_[stream]);
  if (stream < named_cut_.size()) {
    auto& cut = named_cut_[stream];
    std::size_t k = cut.size();
    while (k > 0 && cut[k - 1] != id) --k;
    if (k > 0) {
      cut.resize(k - 1);
      return;
    }
  }
  ++st.cut;
}

// DECISION D20: everything open on the stream is closed by the loss, innermost first; none yields a duration.
void Matcher::cut_stream(std::uint32_t stream) {
  const std::uint64_t losses = ++losses_[stream];
  if (stream < named_open_.size() && !named_open_[stream].empty()) {
    if (named_cut_.size() <= stream) named_cut_.resize(std::size_t{stream} + 1);
    auto& open = named_open_[stream];
    auto& cut = named_cut_[stream];
    for (const NamedOpen& o : open) {
      Stats& st = slot(o.interval, 0, stream);
      ++st.cut;
      st.touch(losses);
      cut.push_back(o.id);
    }
    open.clear();
    if (cut.size() > kMaxCut) cut.erase(cut.begin(), cut.end() - kMaxCut);
  }
  for (std::uint32_t k = 0; k < machines_.size(); ++k) {
    const Machine& m = machines_[k];
    Open& o = open_[std::size_t{stream} * machines_.size() + k];
    if (m.global || !o.open) continue;
    o.open = false;
    o.cut = true;
    Stats& st = slot(m.interval, m.start_part, stream);
    ++st.cut;
    st.touch(losses);
  }
}

void Matcher::lose(const Sample& s) {
  ++loss_samples_;
  const std::uint32_t stream = stream_one(s);
  // DECISION D23: a classic chip's FIFO serves every CPU of its node: the sample lost may have been any of
  // them. A live recorder's lane is one thread's.
  if (streams_[stream].by_thread) {
    cut_stream(stream);
  } else {
    for (std::uint32_t k = 0; k < streams_.size(); ++k)
      if (!streams_[k].by_thread && streams_[k].source == streams_[stream].source) cut_stream(k);
  }
  // DECISION D24: class 4 pairs its k-th end with its k-th start across streams; every start still waiting
  // is cut (its end may have been the sample lost).
  for (std::uint32_t k = 0; k < machines_.size(); ++k) {
    if (!machines_[k].global) continue;
    Stats& st = slot(machines_[k].interval, machines_[k].start_part, kAll);
    if (queues_[k].size() > queue_cut_[k]) {
      st.cut += queues_[k].size() - queue_cut_[k];
      st.lossy = true;
      queue_cut_[k] = queues_[k].size();
    }
  }
}

inline bool Matcher::feed_one(const Sample& s) {
  ++samples_;
  if (s.is_resource()) ++resource_samples_;  // 003: counters discarded, treated as a Trace sample
  if (lost_before(s.flags)) [[unlikely]]
    lose(s);
  if (s.flags & kFlagNamed) [[unlikely]]
    return feed_named(s);
  const auto rs = roles(s.data & event_mask_);
  if (rs.empty()) return false;
  ++matched_events_;
  const std::uint32_t stream = stream_one(s);
  for (const Role& r : rs) {
    const Machine& m = machines_[r.machine];
    if (m.global) {  // ERRATUM E46: class 4, k-th end with k-th start, all streams, time order
      auto& q = queues_[r.machine];
      slot(m.interval, r.end < 0 ? m.start_part : m.end_part[0], kAll).touch(loss_samples_);  // D22, D24
      if (r.end < 0) {
        q.emplace_back(s.timestamp, stream);
      } else if (queue_cut_[r.machine]) {  // D24: the end of a start cut by a loss: counted then
        q.pop_front();
        --queue_cut_[r.machine];
      } else if (q.empty()) {
        Stats& st = slot(m.interval, m.end_part[0], kAll);
        if (loss_samples_)  // D24: its start may have been lost
          ++st.cut, st.lossy = true;
        else
          ++st.unmatched_ends;
      } else {
        const auto [t0, st0] = q.front();
        q.pop_front();
        record(m, m.end_part[0], stream, st0, t0, s.timestamp);
      }
      continue;
    }
    Open& o = open_[std::size_t{stream} * machines_.size() + r.machine];
    const std::uint64_t losses = losses_[stream];
    if (r.end < 0) {
      Stats& st = slot(m.interval, m.start_part, stream);
      if (o.open) ++st.unmatched_starts;  // counted, then replaced
      st.touch(losses);
      o.t = s.timestamp;
      o.cpu = cpu_of(s);
      o.open = true;
      o.cut = false;
    } else {
      const unsigned part = m.end_part[static_cast<unsigned>(r.end)];
      Stats& st = slot(m.interval, part, stream);
      st.touch(losses);
      if (o.open) {
        o.open = false;
        record(m, part, stream, stream, o.t, s.timestamp, o.cpu, cpu_of(s));
      } else if (o.cut) {  // D21: the end of the one cut by the loss, counted then
        o.cut = false;
      } else if (losses) {  // D21: its start was lost
        ++st.cut;
      } else {
        ++st.unmatched_ends;
      }
    }
  }
  return true;
}

void Matcher::finish() {
  for (std::uint32_t st = 0; st < named_open_.size(); ++st) {
    for (const NamedOpen& o : named_open_[st]) ++slot(o.interval, 0, st).unmatched_starts;
    named_open_[st].clear();
  }
  named_cut_.clear();
  for (std::uint32_t st = 0; st < streams_.size(); ++st)
    for (std::uint32_t k = 0; k < machines_.size(); ++k) {
      Open& o = open_[std::size_t{st} * machines_.size() + k];
      if (!o.open || machines_[k].global) continue;
      ++slot(machines_[k].interval, machines_[k].start_part, st).unmatched_starts;
      o.open = false;
    }
  // The rows "all" of classes 1-3: every stream merged (class 4 is counted there directly).
  for (unsigned i = 0; i < info_.intervals.size(); ++i) {
    if (info_.intervals[i].cls == 4) continue;
    for (unsigned p = 0; p < part_count_[i]; ++p) {
      Stats& all = slot(i, p, kAll);
      all = Stats{};
      for (std::uint32_t st = 0; st < streams_.size(); ++st) all.merge(slot(i, p, st));
    }
  }
  for (std::uint32_t k = 0; k < machines_.size(); ++k) {
    slot(machines_[k].interval, machines_[k].start_part, kAll).unmatched_starts += queues_[k].size() - queue_cut_[k];
    queues_[k].clear();
    queue_cut_[k] = 0;
  }
}

OnCpuTimeline::OnCpuTimeline(std::span<const record::SchedRecord> switches) {
  for (const auto& sw : switches)
    threads_[thread_key(sw.source, sw.thread)].push_back(Point{sw.timestamp, 0, !(sw.h.flags & record::kSchedOut)});
  constexpr std::uint64_t kBias = std::uint64_t{1} << 62;  // room for running time before the first switch
  for (auto& [key, v] : threads_) {
    std::stable_sort(v.begin(), v.end(), [](const Point& a, const Point& b) { return a.t < b.t; });
    v[0].running = kBias;
    for (std::size_t i = 1; i < v.size(); ++i)
      v[i].running = v[i - 1].running + (v[i - 1].in ? v[i].t - v[i - 1].t : 0);
  }
}

std::uint64_t OnCpuTimeline::running_at(std::uint32_t source, std::uint32_t thread, std::uint64_t t) const {
  const auto f = threads_.find(thread_key(source, thread));
  if (f == threads_.end()) return kNone;
  const auto& v = f->second;
  // The last switch at or before t; before the first: running before a switch out, not before a switch in.
  const auto after = std::upper_bound(v.begin(), v.end(), t, [](std::uint64_t x, const Point& p) { return x < p.t; });
  if (after == v.begin()) return v[0].in ? v[0].running : v[0].running - std::min(v[0].t - t, v[0].running);
  const Point& p = *(after - 1);
  return p.running + (p.in ? t - p.t : 0);
}

CpuCounter find_cpu_counter(const std::vector<std::string>& names, std::uint64_t clock_hz) {
  for (std::size_t n = 0; n < names.size(); ++n) {
    if (names[n] == "task-clock") return {static_cast<int>(n), static_cast<double>(clock_hz) / 1e9};  // ns
    if (names[n] == "oncpu") return {static_cast<int>(n), 1.0};  // NodeClk ticks: the timestamp clock
  }
  return {};
}

}  // namespace kron::analysis
