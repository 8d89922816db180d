// kron rpt --html's timeline sink (html_timeline.hpp): lanes, bars, scheduling stretches, arrows, and the grid
// that sums up what was left out (E420), written as one JSON object that the page's script draws.
#include "analysis/html_timeline.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>

#include "kron/board.hpp"
#include "kron/core/text.hpp"

namespace kron::analysis {

namespace {
std::uint8_t state_code(const char* s) {
  if (std::strcmp(s, "running") == 0) return 0;
  return std::strcmp(s, "preempted") == 0 ? 1 : 2;
}
}  // namespace

void PageSink::begin(Timeline& tl) {
  tl_ = &tl;
  for (const auto& in : tl.in().inputs()) {
    if (const tracefile::Reader* r = in->trace_file(); r && program_.empty())
      program_ = std::string(tracefile::program(r->header()));
    for (const auto& loss : in->lane_losses()) lost_ += loss.lost;
    for (const auto& m : in->mpi_records()) rank_of_source_.try_emplace(m.source, m.rank);
  }
  const Matcher* m = tl.matcher();
  if (!m) return;
  // Every interval's name and source location, numbered as the page colours them.
  const auto& ivs = m->info().intervals;
  for (unsigned i = 0; i < ivs.size(); ++i)
    for (unsigned p = 0; p < m->parts(i); ++p) name_of(i, p);
}

std::uint32_t PageSink::name_of(unsigned interval, unsigned part) {
  const std::uint64_t k = (std::uint64_t{interval} << 8) | part;
  const auto [it, fresh] = name_of_part_.try_emplace(k, static_cast<std::uint32_t>(names_.size()));
  if (fresh) {
    const Matcher* m = tl_->matcher();
    names_.push_back(m->part_name(interval, part));
    locations_.push_back(m->info().intervals[interval].location);
  }
  return it->second;
}

std::uint32_t PageSink::lane_of(std::uint32_t source, std::uint32_t lane, bool by_thread) {
  const StreamKey k{source, lane, by_thread};
  const auto [it, fresh] = lane_of_key_.try_emplace(k.key(), static_cast<std::uint32_t>(lanes_.size()));
  if (fresh) {
    LaneInfo li;
    if (const auto r = tl_->rank(source)) rank_of_source_.try_emplace(source, *r);  // ERRATUM E395
    const auto rank = rank_of_source_.find(source);
    li.group = tl_->process_label(source);  // "rank R on HOST (pid P)" for an MPI rank's
    const std::uint32_t pid = board::source_pid(source);
    std::string_view own = tl_->names().comm(source, pid);
    if (own.empty()) own = tl_->names().thread(source, pid);
    li.process = std::string(own);
    li.label = tl_->stream_label(k);
    lanes_.push_back(std::move(li));
    lane_source_.push_back(source);
    lane_key_.push_back(k.key());
    lane_rank_.push_back(rank != rank_of_source_.end() ? rank->second : ~0u);
    grid_.emplace_back();
    state_grid_.emplace_back();
  }
  return it->second;
}

void PageSink::samples(std::span<const Sample> batch) {
  if (batch.empty() || !tl_->have_t0()) return;
  span_ = std::max(span_, tl_->ns(batch.back().timestamp));  // the samples come in time order
  // A lane for every stream that has samples, in order of first appearance (runs of one stream are common).
  std::uint64_t last = ~std::uint64_t{0};
  for (const Sample& s : batch) {
    const StreamKey k = StreamKey::of(s);
    if (k.key() == last) continue;
    last = k.key();
    lane_of(k.source, k.lane, k.by_thread);
  }
}

// Keeps `x` while under `limit`; past it, the longest `limit` (a min-heap on the duration).
template <class T>
void PageSink::keep(std::vector<T>& v, const T& x, std::size_t limit, std::uint64_t& dropped) {
  if (v.size() < limit) {
    v.push_back(x);
    if (v.size() == limit) std::make_heap(v.begin(), v.end(), std::greater<>());
    return;
  }
  ++dropped;
  if (limit == 0 || !(x > v.front())) return;
  std::pop_heap(v.begin(), v.end(), std::greater<>());
  v.back() = x;
  std::push_heap(v.begin(), v.end(), std::greater<>());
}

void PageSink::interval(const Occurrence& o) {
  const Matcher& m = *tl_->matcher();
  const unsigned cls = m.info().intervals[o.interval].cls;
  const std::uint64_t s = tl_->ns(o.start), e = std::max(s, tl_->ns(o.end));
  span_ = std::max(span_, e);
  if (lane_of_stream_.size() < m.streams().size()) lane_of_stream_.resize(m.streams().size(), ~0u);
  auto lane = [&](std::uint32_t st) {
    if (lane_of_stream_[st] == ~0u) {
      const StreamKey& k = m.streams()[st];
      lane_of_stream_[st] = lane_of(k.source, k.lane, k.by_thread);
    }
    return lane_of_stream_[st];
  };
  if (cls == 4) {  // across streams: an arrow from the start's lane to the end's
    if (arrows_.size() / 7 >= lim_.arrows) return void(++arrows_dropped_);
    arrows_.insert(arrows_.end(), {lane(o.start_stream), s, lane(o.stream), e, 0, 0, 1});
    return;
  }
  // Nesting: the named scopes still open around this one (E152), then, for interval.info's intervals, the
  // first row below them whose last interval ended by this one's start (they may overlap).
  std::uint64_t depth = m.open_scopes(o.stream);
  if (!o.name_id) {
    if (row_end_.size() <= o.stream) row_end_.resize(std::size_t{o.stream} + 1);
    auto& rows = row_end_[o.stream];
    std::size_t r = 0;
    while (r < rows.size() && rows[r] > s) ++r;
    if (r == rows.size()) rows.push_back(0);
    rows[r] = e;
    depth += r;
  }
  ++bars_seen_;
  const std::uint32_t l = lane(o.stream);
  ++lanes_[l].bars;
  if (depth >= lim_.depths) return void(++deeper_);
  const Bar b{s, e - s, o.value, l, name_of(o.interval, o.part), static_cast<std::uint16_t>(depth)};
  grid_bar(b);
  keep(bars_, b, lim_.bars, bars_dropped_);
}

void PageSink::sched_stretch(const SchedStretch& x) {
  if (!tl_->have_t0() && !base_known_) {  // a recording of switches only: times from the first switch
    base_known_ = true;
    std::uint64_t first = ~std::uint64_t{0};
    for (const auto& in : tl_->in().inputs())
      for (const auto& sw : in->sched_switches()) first = std::min(first, sw.timestamp);
    base_ns_ = tl_->ns_after(first);
  }
  const std::uint64_t s = tl_->ns_after(x.begin) - base_ns_, e = std::max(s, tl_->ns_after(x.end) - base_ns_);
  span_ = std::max(span_, e);
  const std::uint32_t l = lane_of(x.source, x.thread, true);
  const Stretch st{s, e - s, l, state_code(x.state), x.cpu};
  LaneInfo& li = lanes_[l];
  (st.state == 0 ? li.running : st.state == 1 ? li.preempted : li.waiting) += e - s;
  ++stretches_seen_;
  grid_stretch(st);
  keep(stretches_, st, lim_.stretches, stretches_dropped_);
}

void PageSink::mpi_message(const record::MpiRecord& send, const record::MpiRecord& recv) {
  if (arrows_.size() / 7 >= lim_.arrows) return void(++arrows_dropped_);
  const std::uint64_t s = tl_->ns_after(send.timestamp) - base_ns_, e = tl_->ns_after(recv.end) - base_ns_;
  span_ = std::max(span_, e);
  arrows_.insert(arrows_.end(),
                 {lane_of(send.source, send.thread, true), s, lane_of(recv.source, recv.thread, true), std::max(s, e),
                  send.bytes, static_cast<std::uint64_t>(static_cast<std::uint32_t>(send.tag)), 0});
}

void PageSink::end() {}

std::vector<std::uint32_t> PageSink::order() const {
  std::vector<std::uint32_t> o(lanes_.size());
  for (std::uint32_t i = 0; i < o.size(); ++i) o[i] = i;
  std::sort(o.begin(), o.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::pair(lane_rank_[a], lane_key_[a]) < std::pair(lane_rank_[b], lane_key_[b]);
  });
  return o;
}

std::vector<PageSink::LaneInfo> PageSink::lanes() const {
  std::vector<LaneInfo> v;
  for (const std::uint32_t l : order()) v.push_back(lanes_[l]);
  return v;
}

// ---- The grid (E420) -------------------------------------------------------------------------------------

void PageSink::widen(std::uint64_t end_ns) {
  const unsigned n = lim_.columns;
  while (end_ns >= col_ns_ * n) {
    col_ns_ *= 2;
    for (auto& lane : grid_)
      for (auto& row : lane) {
        for (unsigned c = 0; c < n / 2; ++c) {
          Cell a = row[2 * c];
          const Cell& b = row[2 * c + 1];
          if (b.name == a.name)
            a.best += b.best;
          else if (b.best > a.best)
            a.name = b.name, a.best = b.best;
          a.covered += b.covered;
          row[c] = a;
        }
        std::fill(row.begin() + n / 2, row.end(), Cell{});
      }
    for (auto& row : state_grid_) {
      if (row.empty()) continue;
      for (unsigned c = 0; c < n / 2; ++c)
        for (int k = 0; k < 3; ++k) row[c].ns[k] = row[2 * c].ns[k] + row[2 * c + 1].ns[k];
      std::fill(row.begin() + n / 2, row.end(), StateCell{});
    }
  }
}

// Calls f(column, overlap ns) for each column that [s, s + d) covers.
template <class F>
static void each_column(std::uint64_t s, std::uint64_t d, std::uint64_t w, F&& f) {
  const std::uint64_t e = s + d;
  for (std::uint64_t c = s / w; c * w < e || (d == 0 && c == s / w); ++c)
    f(static_cast<unsigned>(c), static_cast<float>(std::min(e, (c + 1) * w) - std::max(s, c * w)));
}

void PageSink::grid_bar(const Bar& b) {
  widen(b.start + b.dur);
  auto& rows = grid_[b.lane];
  if (rows.size() <= b.depth) rows.resize(std::size_t{b.depth} + 1, std::vector<Cell>(lim_.columns));
  auto& row = rows[b.depth];
  each_column(b.start, b.dur, col_ns_, [&](unsigned c, float ns) {
    Cell& x = row[c];
    x.covered += ns;
    if (x.name == b.name)
      x.best += ns;
    else if (ns > x.best)
      x.name = b.name, x.best = ns;
  });
}

void PageSink::grid_stretch(const Stretch& st) {
  widen(st.start + st.dur);
  auto& row = state_grid_[st.lane];
  if (row.empty()) row.resize(lim_.columns);
  each_column(st.start, st.dur, col_ns_, [&](unsigned c, float ns) { row[c].ns[st.state] += ns; });
}

// ---- The page's data -------------------------------------------------------------------------------------

namespace {
void json_str(std::string& o, const std::string& s) {
  o += '"';
  for (unsigned char c : text::utf8_safe(s)) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += static_cast<char>(c);
    } else if (c < 0x20 || c == '<' || c == '>' || c == '&') {  // never "</script>" inside the page's script
      fmt::format_to(std::back_inserter(o), "\\u{:04x}", c);
    } else {
      o += static_cast<char>(c);
    }
  }
  o += '"';
}
}  // namespace

// {"span": ns, "lanes": [{"group", "label", "source", "rank"}], "names": [[name, location]],
//  "bars": [lane, depth, name, start, dur, value, ...], "states": [lane, state, start, dur, cpu, ...] (both in
//  time order, each start given as the step from the start before it),
//  "arrows": [from lane, t, to lane, t, bytes, tag, kind (0 MPI, 1 class 4), ...],
//  "dropped": {"bars", "states", "arrows", "deeper"}, "col": column ns,
//  "grid": [[lane, depth, column, covered ns, name, ...]], "sgrid": [lane, column, running, runnable, blocked, ...]}
// (the grids only when bars or stretches were left out).
std::string PageSink::data_json() const {
  std::string o;
  auto it = std::back_inserter(o);
  const std::vector<std::uint32_t> ord = order();
  std::vector<std::uint32_t> pos(ord.size());  // lane -> its place on the page
  for (std::uint32_t i = 0; i < ord.size(); ++i) pos[ord[i]] = i;
  fmt::format_to(it, "{{\"span\":{},\"col\":{},\"lanes\":[", span_, col_ns_);
  for (std::size_t k = 0; k < ord.size(); ++k) {
    const std::uint32_t i = ord[k];
    o += k ? ",{\"group\":" : "{\"group\":";
    json_str(o, lanes_[i].group);
    o += ",\"label\":";
    json_str(o, lanes_[i].label);
    fmt::format_to(it, ",\"source\":{},\"rank\":{}}}", lane_source_[i],
                   lane_rank_[i] == ~0u ? -1 : static_cast<std::int64_t>(lane_rank_[i]));
  }
  o += "],\"names\":[";
  for (std::size_t i = 0; i < names_.size(); ++i) {
    o += i ? ",[" : "[";
    json_str(o, names_[i]);
    o += ',';
    json_str(o, locations_[i]);
    o += ']';
  }
  std::vector<Bar> bars = bars_;
  std::sort(bars.begin(), bars.end(), [](const Bar& a, const Bar& b) { return a.start < b.start; });
  o += "],\n\"bars\":[";
  for (std::size_t i = 0; i < bars.size(); ++i)
    fmt::format_to(it, "{}{},{},{},{},{},{}", i ? "," : "", pos[bars[i].lane], bars[i].depth, bars[i].name,
                   bars[i].start - (i ? bars[i - 1].start : 0), bars[i].dur, bars[i].value);  // steps: shorter
  std::vector<Stretch> sts = stretches_;
  std::sort(sts.begin(), sts.end(), [](const Stretch& a, const Stretch& b) { return a.start < b.start; });
  o += "],\n\"states\":[";
  for (std::size_t i = 0; i < sts.size(); ++i)
    fmt::format_to(it, "{}{},{},{},{},{}", i ? "," : "", pos[sts[i].lane], sts[i].state,
                   sts[i].start - (i ? sts[i - 1].start : 0), sts[i].dur, sts[i].cpu);
  o += "],\n\"arrows\":[";
  for (std::size_t i = 0; i < arrows_.size(); ++i)  // lanes at 0 and 2 of every 7
    fmt::format_to(it, "{}{}", i ? "," : "", i % 7 == 0 || i % 7 == 2 ? pos[arrows_[i]] : arrows_[i]);
  fmt::format_to(it, "],\n\"dropped\":{{\"bars\":{},\"states\":{},\"arrows\":{},\"deeper\":{}}}", bars_dropped_,
                 stretches_dropped_, arrows_dropped_, deeper_);
  bool first = true;
  o += ",\n\"grid\":[";
  if (bars_dropped_)
    for (std::size_t l = 0; l < grid_.size(); ++l)
      for (std::size_t d = 0; d < grid_[l].size(); ++d)
        for (unsigned c = 0; c < lim_.columns; ++c)
          if (const Cell& x = grid_[l][d][c]; x.covered > 0) {
            fmt::format_to(it, "{}{},{},{},{:.0f},{}", first ? "" : ",", pos[l], d, c, x.covered, x.name);
            first = false;
          }
  first = true;
  o += "],\n\"sgrid\":[";
  if (stretches_dropped_)
    for (std::size_t l = 0; l < state_grid_.size(); ++l)
      for (unsigned c = 0; c < state_grid_[l].size(); ++c)
        if (const StateCell& x = state_grid_[l][c]; x.ns[0] + x.ns[1] + x.ns[2] > 0) {
          fmt::format_to(it, "{}{},{},{:.0f},{:.0f},{:.0f}", first ? "" : ",", pos[l], c, x.ns[0], x.ns[1], x.ns[2]);
          first = false;
        }
  o += "]}";
  return o;
}

}  // namespace kron::analysis
