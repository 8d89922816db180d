// kron export --format chrome-json (exports.hpp). Trace Event format: "Trace Event Format" (Google, the
// document chrome://tracing and Perfetto's JSON importer follow): an object {"traceEvents": [...]}, times in
// microseconds; ph "X" complete slice (ts, dur), "b"/"e" async slice (cat, id), "C" counter (args are the
// series), "i" instant (s: "t" thread scope), "M" metadata (process_name, thread_name), "s"/"f" flow.
#include <fmt/core.h>
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <unordered_set>

#include "exports/exports.hpp"
#include "exports/sink.hpp"
#include "exports/text_out.hpp"
#include "kron/core/text.hpp"

namespace kron::exports {

void TextOut::flush() {
  if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size())
    throw std::runtime_error(std::string("write failed: ") + std::strerror(errno));
  buf_.clear();
}

std::string json_string(const std::string& s) {
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

namespace {

using analysis::Occurrence;
using analysis::StreamKey;

// ERRATUM E153. Times are integer nanoseconds since the first sample (Timeline::ns, rounding down), written
// as microseconds with exactly three decimals: a slice's end is start + duration in the same integers, so
// a child never ends after its parent, whatever the viewer's rounding.
std::string us_text(std::uint64_t n) { return fmt::format("{}.{:03}", n / 1000, n % 1000); }

// Scheduling switches (kron record --sched) as per-thread state tracks: a thread track of its own beside
// each thread's slices (tid kSchedTrack | thread, named "NAME (tid N): scheduling"), one slice per stretch.
constexpr std::uint32_t kSchedTrack = 0x40000000u;

class ChromeJson final : public analysis::TimelineSink {
 public:
  ChromeJson(std::FILE* f, ExportStats& st) : out_(f), b_(out_.buf()), st_(st) {}
  Needs needs() const override { return Needs().matched().then({Part::Stretches, Part::Snapshots, Part::Messages}); }
  void begin(analysis::Timeline& tl) override;
  void stream(std::uint32_t, const StreamKey& k, const Sample&) override;
  void interval(const Occurrence& o) override;
  void sample(const Sample& s, std::uint32_t stream, bool interval_event) override;
  void sched_thread(std::uint32_t source, std::uint32_t thread) override;
  void sched_stretch(const analysis::SchedStretch& x) override;
  void snapshot(const analysis::SnapshotSeries& x) override;
  void mpi_message(const record::MpiRecord& snd, const record::MpiRecord& rcv) override;
  void end() override {
    b_ += "\n]}\n";
    out_.flush();
  }

 private:
  void sep() {
    if (!first_event_) b_ += ",\n";
    first_event_ = false;
  }
  // A named site's arguments: its value, its id and where it is in the source.
  std::string site_args(std::uint16_t id, std::int64_t value) const;

  TextOut out_;
  std::string& b_;
  std::back_insert_iterator<std::string> it_{b_};
  ExportStats& st_;
  analysis::Timeline* tl_ = nullptr;
  const analysis::Matcher* m_ = nullptr;
  bool first_event_ = true;
  std::string counter_names_[kResourceCounters];  // JSON strings
  std::unordered_set<std::uint32_t> named_pid_;
  std::uint64_t async_id_ = 0, flow_id_ = 0;
};

void ChromeJson::begin(analysis::Timeline& tl) {
  tl_ = &tl;
  m_ = tl.matcher();
  for (unsigned c = 0; c < kResourceCounters; ++c) counter_names_[c] = json_string(tl.counter_label(c));
  b_ += "{\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"producer\":\"kron export\",";
  fmt::format_to(it_, "\"clock_hz\":{},\"inputs\":[", tl.clock_hz());
  const auto& inputs = tl.in().inputs();
  for (std::size_t i = 0; i < inputs.size(); ++i)
    fmt::format_to(it_, "{}{}", i ? "," : "", json_string(inputs[i]->path()));
  b_ += "]},\n\"traceEvents\":[\n";
}

// Tracks: process = source identification, thread = the thread (live recordings) or CPU (classic); named
// once, when first seen, with the names the recording holds.
void ChromeJson::stream(std::uint32_t, const StreamKey& k, const Sample&) {
  if (named_pid_.insert(k.source).second) {
    sep();
    fmt::format_to(it_, R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":{}}}}})", k.source,
                   json_string(tl_->process_label(k.source)));
  }
  sep();
  fmt::format_to(it_, R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})", k.source, k.lane,
                 json_string(tl_->stream_label(k)));
}

// value: a named probe's, signed (DECISION D30).
std::string ChromeJson::site_args(std::uint16_t id, std::int64_t value) const {
  std::string a = fmt::format(R"("value":{},"name_id":{})", value, id);
  if (const tracefile::NameRecord* r = tl_->names().site(id))
    a += fmt::format(R"(,"location":{})", json_string(tracefile::NameTable::location(*r)));
  return a;
}

void ChromeJson::interval(const Occurrence& o) {
  const auto& sk = m_->streams()[o.stream];
  const std::string name = json_string(m_->part_name(o.interval, o.part));
  const unsigned cls = m_->info().intervals[o.interval].cls;
  const std::uint64_t ns0 = tl_->ns(o.start), ns1 = tl_->ns(o.end);
  sep();
  if (cls == 4) {  // start and end may be on different streams: an async slice on the start's process
    const auto& ss = m_->streams()[o.start_stream];
    ++async_id_;
    fmt::format_to(it_, R"({{"ph":"b","cat":"class4","id":{},"name":{},"pid":{},"tid":{},"ts":{}}})", async_id_, name,
                   ss.source, ss.lane, us_text(ns0));
    sep();
    fmt::format_to(it_,
                   R"({{"ph":"e","cat":"class4","id":{},"name":{},"pid":{},"tid":{},"ts":{},)"
                   R"("args":{{"ticks":{},"end_stream":"{}"}}}})",
                   async_id_, name, ss.source, ss.lane, us_text(ns1), o.duration, tl_->stream_name(sk));
  } else if (o.name_id) {  // a named scope: its value and site in the arguments
    fmt::format_to(it_,
                   R"({{"ph":"X","cat":"scope","name":{},"pid":{},"tid":{},"ts":{},"dur":{},)"
                   R"("args":{{{},"ticks":{}}}}})",
                   name, sk.source, sk.lane, us_text(ns0), us_text(ns1 - ns0), site_args(o.name_id, o.value),
                   o.duration);
  } else {
    fmt::format_to(it_,
                   R"({{"ph":"X","cat":"class{}","name":{},"pid":{},"tid":{},"ts":{},"dur":{},)"
                   R"("args":{{"ticks":{}}}}})",
                   cls, name, sk.source, sk.lane, us_text(ns0), us_text(ns1 - ns0), o.duration);
  }
  ++st_.slices;
}

void ChromeJson::sample(const Sample& s, std::uint32_t stream, bool interval_event) {
  ++st_.samples;
  const std::uint32_t lane = tl_->streams()[stream].lane;
  const std::string ts = us_text(tl_->ns(s.timestamp));
  if (s.is_resource()) {
    for (unsigned c = 0; c < kResourceCounters; ++c) {
      sep();
      fmt::format_to(it_, R"({{"ph":"C","name":{},"pid":{},"tid":{},"ts":{},"args":{{"value":{}}}}})",
                     counter_names_[c], s.source, lane, ts, s.counters[c]);
    }
    st_.counters += kResourceCounters;
  } else if (!interval_event && (s.flags & kFlagNamed)) {  // a named event (or a stray scope end)
    sep();
    fmt::format_to(it_, R"({{"ph":"i","s":"t","name":{},"pid":{},"tid":{},"ts":{},"args":{{{},"group":{}}}}})",
                   json_string(tl_->names().name_of(s)), s.source, lane, ts,
                   site_args(record::name_id_of(s.data), record::named_value_of(s.data)), s.group);
    ++st_.instants;
  } else if (!interval_event) {
    sep();
    fmt::format_to(it_,
                   R"({{"ph":"i","s":"t","name":"event {}","pid":{},"tid":{},"ts":{},)"
                   R"("args":{{"data":"0x{:x}","flags":{},"group":{},"thread":{},"phase":{}}}}})",
                   s.data & m_->event_mask(), s.source, lane, ts, s.data, s.flags, s.group, s.thread, s.phase);
    ++st_.instants;
  }
  out_.maybe_flush();
}

// The thread states: "running" from a switch in to the next switch out (args: the CPU), then "preempted"
// or "waiting" up to the next switch in; times as the slices'.
void ChromeJson::sched_thread(std::uint32_t source, std::uint32_t thread) {
  if (named_pid_.insert(source).second) {  // a process that ran without probes
    sep();
    fmt::format_to(it_, R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":{}}}}})", source,
                   json_string(tl_->process_label(source)));
  }
  sep();
  fmt::format_to(it_, R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})", source,
                 kSchedTrack | (thread & (kSchedTrack - 1)), json_string(tl_->sched_label(source, thread)));
}

void ChromeJson::sched_stretch(const analysis::SchedStretch& x) {
  sep();
  const std::uint64_t n0 = tl_->ns_after(x.begin), n1 = tl_->ns_after(x.end);
  fmt::format_to(it_,
                 R"({{"ph":"X","cat":"sched","name":"{}","pid":{},"tid":{},"ts":{},"dur":{},)"
                 R"("args":{{"cpu":{},"ticks":{}}}}})",
                 x.state, x.source, kSchedTrack | (x.thread & (kSchedTrack - 1)), us_text(n0), us_text(n1 - n0), x.cpu,
                 x.end - x.begin);
  ++st_.sched_slices;
}

// Histogram and virtual counter snapshots as counter events ("ph":"C") of the process, one series per
// thread and phase: a histogram's count, p50, p99 and max, a virtual counter's value.
void ChromeJson::snapshot(const analysis::SnapshotSeries& x) {
  const std::string ts = us_text(tl_->have_t0() && x.when > tl_->t0() ? tl_->ns(x.when) : 0);
  sep();
  if (x.hist)
    fmt::format_to(it_, R"({{"ph":"C","name":{},"pid":{},"ts":{},"args":{{"count":{},"p50":{},"p99":{},"max":{}}}}})",
                   json_string(x.series), x.source, ts, x.sum.count, x.sum.p50, x.sum.p99, x.sum.max);
  else
    fmt::format_to(it_, R"({{"ph":"C","name":{},"pid":{},"ts":{},"args":{{"value":{}}}}})", json_string(x.series),
                   x.source, ts, x.value);
  ++st_.counters;
}

// ERRATUM E169. MPI messages (trace format 1.5): each matched send/receive pair a flow ("s" then "f", id in
// a range of its own) from the sender's thread at the send's begin to the receiver's thread at the
// receive's end, each bound to the slice around it there (libkron_mpi's MPI_Send / MPI_Recv ... scopes;
// "bp":"e" for the end). Collectives are not flows. Times before the first sample are drawn at 0.
void ChromeJson::mpi_message(const record::MpiRecord& snd, const record::MpiRecord& rcv) {
  ++flow_id_;
  sep();
  fmt::format_to(it_,
                 R"({{"ph":"s","cat":"mpi","name":"MPI message","id":{},"pid":{},"tid":{},"ts":{},)"
                 R"("args":{{"to_rank":{},"tag":{},"comm":{},"bytes":{}}}}})",
                 flow_id_, snd.source, snd.thread, us_text(tl_->ns_after(snd.timestamp)), snd.peer, snd.tag, snd.comm,
                 snd.bytes);
  sep();
  fmt::format_to(it_,
                 R"({{"ph":"f","bp":"e","cat":"mpi","name":"MPI message","id":{},"pid":{},"tid":{},"ts":{},)"
                 R"("args":{{"from_rank":{},"tag":{},"comm":{},"bytes":{}}}}})",
                 flow_id_, rcv.source, rcv.thread, us_text(tl_->ns_after(rcv.end)), rcv.peer, rcv.tag, rcv.comm,
                 rcv.bytes);
  st_.mpi_flows = flow_id_;
  out_.maybe_flush();
}

}  // namespace

ExportStats export_chrome_json(analysis::Timeline& tl, std::FILE* out) { return run_sink<ChromeJson>(tl, out); }

}  // namespace kron::exports
