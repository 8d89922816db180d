// kron export: see export.hpp. Trace Event format: "Trace Event Format" (Google, the document
// chrome://tracing and Perfetto's JSON importer follow): an object {"traceEvents": [...]}, times in
// microseconds; ph "X" complete slice (ts, dur), "b"/"e" async slice (cat, id), "C" counter (args are
// the series), "i" instant (s: "t" thread scope), "M" metadata (process_name, thread_name).
#include "analysis/export.hpp"

#include "analysis/hist.hpp"
#include "kron/board.hpp"
#include "kron/core/text.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <functional>
#include <unordered_map>
#include <unordered_set>

namespace kron::analysis {

namespace {
__extension__ typedef unsigned __int128 u128;  // ticks x 10^9 before the division (E153)

class Out {
 public:
  explicit Out(std::FILE* f) : f_(f) { buf_.reserve(kBuf + 4096); }
  std::string& buf() { return buf_; }
  void maybe_flush() {
    if (buf_.size() >= kBuf) flush();
  }
  void flush() {
    if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size())
      throw std::runtime_error(std::string("write failed: ") + std::strerror(errno));
    buf_.clear();
  }

 private:
  static constexpr std::size_t kBuf = 1 << 20;
  std::FILE* f_;
  std::string buf_;
};

// JSON string escaping for names that come from files; bytes that are not UTF-8 become \xNN (ERRATUM
// E131), so the file is valid UTF-8 whatever the names hold.
std::string jstr(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : text::utf8_safe(s)) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += static_cast<char>(c);
    } else if (c < 0x20) {
      o += fmt::format("\\u{:04x}", c);
    } else {
      o += static_cast<char>(c);
    }
  }
  return o + "\"";
}

}  // namespace

std::uint64_t for_each_sched_stretch(const Merged& in, std::uint64_t t0,
                                    const std::function<void(std::uint32_t, std::uint32_t)>& first,
                                    const std::function<void(const SchedStretch&)>& stretch) {
  struct Last {
    std::uint64_t t;
    std::uint8_t flags;
    std::uint16_t cpu;
  };
  std::unordered_map<std::uint64_t, Last> last;  // (source, thread) -> its last switch
  std::uint64_t n = 0;
  for (const auto& input : in.inputs())
    for (const auto& sw : input->sched_switches()) {
      const std::uint64_t key = std::uint64_t{sw.source} << 32 | sw.thread;
      const auto [at, fresh] = last.try_emplace(key, Last{sw.timestamp, sw.h.flags, sw.h.cpu});
      if (fresh) {
        first(sw.source, sw.thread);
        continue;
      }
      Last& l = at->second;
      const bool was_out = l.flags & record::kSchedOut, now_out = sw.h.flags & record::kSchedOut;
      if (was_out != now_out && sw.timestamp >= l.t && sw.timestamp > t0) {
        const char* state = !was_out ? "running" : (l.flags & record::kSchedPreempt) ? "preempted" : "waiting";
        stretch(SchedStretch{sw.source, sw.thread, state, l.t, sw.timestamp,
                             was_out ? sw.h.cpu : l.cpu});
        ++n;
      }
      l = Last{sw.timestamp, sw.h.flags, sw.h.cpu};
    }
  return n;
}

std::uint64_t for_each_snapshot_series(const Merged& in, const std::function<void(const SnapshotSeries&)>& f) {
  std::uint64_t n = 0;
  for (const auto& input : in.inputs()) {
    const std::span<const std::uint8_t> snaps = input->snapshots();
    for (std::size_t at = 0; at + sizeof(record::RecordHeader) <= snaps.size();) {
      record::RecordHeader h;
      std::memcpy(&h, snaps.data() + at, sizeof h);
      if (h.size < sizeof h || at + h.size > snaps.size()) break;  // validated by the reader: not reached
      hist::Merger one;
      one.add(snaps.subspan(at, h.size));
      const hist::Merged r = one.result();
      SnapshotSeries x;
      std::memcpy(&x.source, snaps.data() + at + 8, 4);
      std::memcpy(&x.thread, snaps.data() + at + 12, 4);
      std::memcpy(&x.when, snaps.data() + at + 16, 8);
      x.hist = true;
      for (const auto& [name, phases] : r.hists)
        for (const auto& [p, hg] : phases) {
          x.series = fmt::format("hist {} (thread {}, phase {})", name, x.thread, p);
          x.sum = hist::summarize(hg);
          f(x);
          ++n;
        }
      x.hist = false;
      for (const auto& [p, cs] : r.counters)
        for (const auto& [i, v] : cs) {
          x.series = fmt::format("vc {} (thread {}, phase {})", i, x.thread, p);
          x.value = v;
          f(x);
          ++n;
        }
      at += h.size;
    }
  }
  return n;
}

MpiCalls mpi_calls(const Merged& in) {
  MpiCalls c;
  for (std::size_t i = 0; i < in.inputs().size(); ++i)
    for (const auto& rec : in.inputs()[i]->mpi_records()) c.events.push_back({rec, static_cast<std::uint32_t>(i)});
  if (!c.events.empty()) c.matching = match_messages(c.events);
  return c;
}

namespace {
// Scheduling switches (kron record --sched) as per-thread state tracks: a thread track of its own beside
// each thread's slices (tid kSchedTrack | thread, named "thread N: scheduling"), one slice per stretch:
// "running" from a switch in to the next switch out (args: the CPU), then "preempted" (switched out
// while runnable) or "waiting" (it blocked or slept) up to the next switch in. A stretch whose other end
// is not in the recording is not drawn. Times as the slices': microseconds since the first sample `t0`.
constexpr std::uint32_t kSchedTrack = 0x40000000u;
// ERRATUM E153. Times are integer nanoseconds since the first sample `t0` (ticks converted once, rounding
// down), written as microseconds with exactly three decimals: a slice's end is start + duration in the
// same integers, so a child never ends after its parent, whatever the viewer's rounding.
std::uint64_t ns_since(std::uint64_t t, std::uint64_t t0, std::uint64_t mask, std::uint64_t clock) {
  return static_cast<std::uint64_t>(static_cast<u128>((t - t0) & mask) * 1'000'000'000u / clock);
}
std::string us_text(std::uint64_t n) { return fmt::format("{}.{:03}", n / 1000, n % 1000); }

std::uint64_t export_sched_tracks(const Merged& in, std::uint64_t t0, std::uint64_t clock,
                                  const std::function<void()>& sep, std::string& b) {
  auto it = std::back_inserter(b);
  auto ns = [&](std::uint64_t t) { return t <= t0 ? 0 : ns_since(t, t0, ~std::uint64_t{0}, clock); };
  return for_each_sched_stretch(
      in, t0,
      [&](std::uint32_t source, std::uint32_t thread) {
        sep();
        fmt::format_to(it, R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"thread {}: scheduling"}}}})",
                       source, kSchedTrack | (thread & (kSchedTrack - 1)), thread);
      },
      [&](const SchedStretch& x) {
        sep();
        const std::uint64_t n0 = ns(x.begin), n1 = ns(x.end);
        fmt::format_to(it,
                       R"({{"ph":"X","cat":"sched","name":"{}","pid":{},"tid":{},"ts":{},"dur":{},)"
                       R"("args":{{"cpu":{},"ticks":{}}}}})",
                       x.state, x.source, kSchedTrack | (x.thread & (kSchedTrack - 1)), us_text(n0), us_text(n1 - n0),
                       x.cpu, x.end - x.begin);
      });
}
}  // namespace

ExportStats export_chrome_json(Merged& in, const IntervalInfo* info, const RptOptions& opt, std::FILE* f) {
  Out out(f);
  ExportStats st;
  IntervalInfo none;
  const tracefile::NameTable& names = in.names();
  Matcher m(info ? *info : none, opt, in.ts_mask(), &names);
  const std::uint64_t clock = in.clock_hz();
  SampleLoop loop(in, st);
  std::uint64_t& t0 = loop.t0;
  const bool& have_t0 = loop.have_t0;
  std::string& b = out.buf();
  auto it = std::back_inserter(b);
  bool first_event = true;
  auto sep = [&] {
    if (!first_event) b += ",\n";
    first_event = false;
  };
  auto ns = [&](std::uint64_t t) { return ns_since(t, t0, in.ts_mask(), clock); };  // ERRATUM E153
  std::string counter_names[kResourceCounters];
  for (unsigned c = 0; c < kResourceCounters; ++c) {
    for (const auto& input : in.inputs())
      if (!input->counter_name(c).empty()) {
        counter_names[c] = input->counter_name(c);
        break;
      }
    counter_names[c] = jstr(counter_names[c].empty() ? fmt::format("counter {}", c)
                                                     : fmt::format("counter {} ({})", c, counter_names[c]));
  }
  b += "{\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"producer\":\"kron export\",";
  fmt::format_to(it, "\"clock_hz\":{},\"inputs\":[", clock);
  for (std::size_t i = 0; i < in.inputs().size(); ++i)
    fmt::format_to(it, "{}{}", i ? "," : "", jstr(in.inputs()[i]->path()));
  b += "]},\n\"traceEvents\":[\n";
  // Tracks: process = source identification, thread = the thread (live recordings) or CPU (classic);
  // named once, when first seen, with the names the recording holds (the thread's name; the process's is
  // its main thread's, whose id is the pid).
  std::unordered_set<std::uint32_t> named_pid;
  std::unordered_set<std::uint64_t> named_tid;
  auto name_track = [&](const StreamKey& k) {
    if (named_pid.insert(k.source).second) {
      const std::uint32_t pid = board::source_pid(k.source);
      const std::string_view main = names.thread(k.source, pid);
      const std::string label = main.empty() ? fmt::format("source 0x{:08x}", k.source)
                                             : fmt::format("{} (pid {})", main, pid);
      sep();
      fmt::format_to(it, R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":{}}}}})", k.source,
                     jstr(label));
    }
    if (named_tid.insert(k.key()).second) {
      const std::string_view tn = k.by_thread ? names.thread(k.source, k.lane) : std::string_view{};
      const std::string label = !tn.empty() ? fmt::format("{} (tid {})", tn, k.lane)
                                            : fmt::format("{} {}", k.by_thread ? "thread" : "cpu", k.lane);
      sep();
      fmt::format_to(it, R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})", k.source,
                     k.lane, jstr(label));
    }
  };
  // A named site's arguments: its value, its id and where it is in the source.
  auto site_args = [&](std::uint16_t id, std::uint64_t value) {
    std::string a = fmt::format(R"("value":{},"name_id":{})", value, id);
    if (const tracefile::NameRecord* r = names.site(id)) a += fmt::format(R"(,"location":{})", jstr(tracefile::NameTable::location(*r)));
    return a;
  };
  std::uint64_t async_id = 0;
  m.on_interval = [&](const Occurrence& o) {
    const auto& sk = m.streams()[o.stream];
    const std::string name = jstr(m.part_name(o.interval, o.part));
    const unsigned cls = m.info().intervals[o.interval].cls;
    const std::uint64_t ns0 = ns(o.start), ns1 = ns(o.end);
    if (cls == 4) {  // start and end may be on different streams: an async slice on the start's process
      const auto& ss = m.streams()[o.start_stream];
      ++async_id;
      sep();
      fmt::format_to(it, R"({{"ph":"b","cat":"class4","id":{},"name":{},"pid":{},"tid":{},"ts":{}}})", async_id,
                     name, ss.source, ss.lane, us_text(ns0));
      sep();
      fmt::format_to(it,
                     R"({{"ph":"e","cat":"class4","id":{},"name":{},"pid":{},"tid":{},"ts":{},)"
                     R"("args":{{"ticks":{},"end_stream":"{}"}}}})",
                     async_id, name, ss.source, ss.lane, us_text(ns1), o.duration, stream_name(sk));
    } else if (o.name_id) {  // a named scope: its value and site in the arguments
      sep();
      fmt::format_to(it,
                     R"({{"ph":"X","cat":"scope","name":{},"pid":{},"tid":{},"ts":{},"dur":{},)"
                     R"("args":{{{},"ticks":{}}}}})",
                     name, sk.source, sk.lane, us_text(ns0), us_text(ns1 - ns0), site_args(o.name_id, o.value),
                     o.duration);
    } else {
      sep();
      fmt::format_to(it,
                     R"({{"ph":"X","cat":"class{}","name":{},"pid":{},"tid":{},"ts":{},"dur":{},)"
                     R"("args":{{"ticks":{}}}}})",
                     cls, name, sk.source, sk.lane, us_text(ns0), us_text(ns1 - ns0), o.duration);
    }
    ++st.slices;
  };
  Sample s;
  while (loop.next(s)) {
    const StreamKey sk = StreamKey::of(s);
    name_track(sk);
    const bool interval_event = m.feed(s);
    const std::string ts = us_text(ns(s.timestamp));
    if (s.is_resource()) {
      for (unsigned c = 0; c < kResourceCounters; ++c) {
        sep();
        fmt::format_to(it, R"({{"ph":"C","name":{},"pid":{},"tid":{},"ts":{},"args":{{"value":{}}}}})",
                       counter_names[c], s.source, sk.lane, ts, s.counters[c]);
      }
      st.counters += kResourceCounters;
    }
    if (!interval_event && !s.is_resource() && (s.flags & kFlagNamed)) {  // a named event (or a stray scope end)
      sep();
      fmt::format_to(it, R"({{"ph":"i","s":"t","name":{},"pid":{},"tid":{},"ts":{},"args":{{{},"group":{}}}}})",
                     jstr(names.name_of(s)), s.source, sk.lane, ts,
                     site_args(record::name_id_of(s.data), record::named_value_of(s.data)), s.group);
      ++st.instants;
    } else if (!interval_event && !s.is_resource()) {
      sep();
      fmt::format_to(it,
                     R"({{"ph":"i","s":"t","name":"event {}","pid":{},"tid":{},"ts":{},)"
                     R"("args":{{"data":"0x{:x}","flags":{},"group":{},"thread":{},"phase":{}}}}})",
                     s.data & m.event_mask(), s.source, sk.lane, ts, s.data, s.flags, s.group, s.thread, s.phase);
      ++st.instants;
    }
    out.maybe_flush();
  }
  m.finish();
  st.sched_slices = export_sched_tracks(in, t0, clock, sep, b);
  // Issue 12: histogram and virtual counter snapshots as counter events ("ph":"C") of the process, one
  // series per thread and phase: a histogram's count, p50, p99 and max, a virtual counter's value.
  st.counters += for_each_snapshot_series(in, [&](const SnapshotSeries& x) {
    const std::string ts = us_text(have_t0 && x.when > t0 ? ns(x.when) : 0);
    sep();
    if (x.hist)
      fmt::format_to(it, R"({{"ph":"C","name":{},"pid":{},"ts":{},"args":{{"count":{},"p50":{},"p99":{},"max":{}}}}})",
                     jstr(x.series), x.source, ts, x.sum.count, x.sum.p50, x.sum.p99, x.sum.max);
    else
      fmt::format_to(it, R"({{"ph":"C","name":{},"pid":{},"ts":{},"args":{{"value":{}}}}})", jstr(x.series), x.source,
                     ts, x.value);
  });
  // ERRATUM E169. MPI messages (trace format 1.5): each matched send/receive pair a flow ("s" then "f", id
  // in a range of its own) from the sender's thread at the send's begin to the receiver's thread at the receive's end,
  // each bound to the slice around it there (libkron_mpi's MPI_Send / MPI_Recv ... scopes; "bp":"e" for the
  // end). Collectives are not flows. Times before the first sample are drawn at 0.
  {
    const MpiCalls mpi = mpi_calls(in);
    auto mns = [&](std::uint64_t t) { return t <= t0 ? 0 : ns_since(t, t0, ~std::uint64_t{0}, clock); };
    std::uint64_t id = 0;
    for (const auto& [si, ri] : mpi.matching.pairs) {
      const record::MpiRecord& snd = mpi.events[si].rec;
      const record::MpiRecord& rcv = mpi.events[ri].rec;
      ++id;
      sep();
      fmt::format_to(it,
                     R"({{"ph":"s","cat":"mpi","name":"MPI message","id":{},"pid":{},"tid":{},"ts":{},)"
                     R"("args":{{"to_rank":{},"tag":{},"comm":{},"bytes":{}}}}})",
                     id, snd.source, snd.thread, us_text(mns(snd.timestamp)), snd.peer, snd.tag, snd.comm, snd.bytes);
      sep();
      fmt::format_to(it,
                     R"({{"ph":"f","bp":"e","cat":"mpi","name":"MPI message","id":{},"pid":{},"tid":{},"ts":{},)"
                     R"("args":{{"from_rank":{},"tag":{},"comm":{},"bytes":{}}}}})",
                     id, rcv.source, rcv.thread, us_text(mns(rcv.end)), rcv.peer, rcv.tag, rcv.comm, rcv.bytes);
      out.maybe_flush();
    }
    st.mpi_flows = id;
  }
  b += "\n]}\n";
  out.flush();
  return st;
}

ExportStats export_csv(Merged& in, std::FILE* f) {
  Out out(f);
  ExportStats st;
  std::string& b = out.buf();
  auto it = std::back_inserter(b);
  b += "type,cpu,source,thread,group,flags,timestamp,time_us,data";
  for (unsigned c = 0; c < kResourceCounters; ++c) fmt::format_to(it, ",c{}", c);
  b += ",phase\n";  // issue 12: the thread's phase (trace format 1.4; 0 in older files and raw streams)
  const std::uint64_t clock = in.clock_hz();
  SampleLoop loop(in, st);
  const std::uint64_t& t0 = loop.t0;
  Sample s;
  while (loop.next(s)) {
    // time_us: microseconds since the first sample.
    fmt::format_to(it, "{},{},0x{:08x},{},{},{},{},{:.4f},{}", name(s.type), s.cpu, s.source, s.thread,
                   s.group == Sample::kGroupUnknown ? std::string() : std::to_string(s.group), s.flags, s.timestamp,
                   static_cast<double>((s.timestamp - t0) & in.ts_mask()) * 1e6 / static_cast<double>(clock), s.data);
    if (s.is_resource())
      for (unsigned c = 0; c < kResourceCounters; ++c) fmt::format_to(it, ",{}", s.counters[c]);
    else
      b.append(kResourceCounters, ',');
    fmt::format_to(it, ",{}\n", s.phase);
    out.maybe_flush();
  }
  out.flush();
  return st;
}

}  // namespace kron::analysis
