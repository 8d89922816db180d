// The Python module kron's compiled part, kron._kron (pybind11): the probes (kron/kron.hpp) and the reading of
// trace files (kron/format/trace_file.hpp's Reader, the interval matcher, the histogram merger). The Python
// part, python/kron/__init__.py, is the interface users see (docs/languages.md).
//
// The probe is built into this module (KRON_TLS_MODEL empty: global-dynamic thread-locals, as a dlopen()ed
// object needs) and attaches at import to $KRON_BOARD as any instrumented program does at start-up; without
// a board every probe is a load, a test and a return.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "analysis/hist.hpp"
#include "analysis/interval_info.hpp"
#include "analysis/matcher.hpp"
#include "kron/core/codec.hpp"
#include "kron/core/record.hpp"
#include "kron/core/stats.hpp"
#include "kron/format/mapped_file.hpp"
#include "kron/format/trace_file.hpp"
#include "kron/kron.hpp"

namespace py = pybind11;

namespace kron::python {
namespace {

// ---- probes ------------------------------------------------------------------------------------------------
// Python has no static storage for a site: each distinct (name, kind, file, function, line) gets one
// kron_site here, kept for the life of the process (as a C++ site is); its strings beside it.
struct SiteStore {
  struct Entry {
    std::string name, file, function;
    kron_site site;
  };
  std::mutex m;
  std::deque<Entry> entries;  // stable addresses
  std::map<std::tuple<std::string, std::uint32_t, std::string, std::string, std::uint32_t>, std::size_t> index;
};
SiteStore& sites() {
  static SiteStore* s = new SiteStore;  // never destroyed: a probe may run while the interpreter exits
  return *s;
}
std::uintptr_t site(const std::string& name, std::uint32_t kind, const std::string& file, const std::string& function,
                    std::uint32_t line) {
  SiteStore& s = sites();
  std::lock_guard<std::mutex> lock(s.m);
  auto key = std::make_tuple(name, kind, file, function, line);
  auto it = s.index.find(key);
  if (it != s.index.end()) return reinterpret_cast<std::uintptr_t>(&s.entries[it->second].site);
  SiteStore::Entry& e = s.entries.emplace_back();
  e.name = name, e.file = file, e.function = function;
  e.site = kron_site{e.name.c_str(), e.file.c_str(), e.function.c_str(), line, kind, 0, 0};
  s.index.emplace(key, s.entries.size() - 1);
  return reinterpret_cast<std::uintptr_t>(&e.site);
}
void named(std::uintptr_t handle, std::uint64_t value, int what) {
  kron_site& s = *reinterpret_cast<kron_site*>(handle);
  kron::named(s, KRON_NAMED_GROUP, value,
              what == 1 ? kron::Named::Begin : what == 2 ? kron::Named::End : kron::Named::Event);
}
// Histograms by name, likewise kept for the life of the process.
std::uintptr_t histogram(const std::string& name) {
  static std::mutex m;
  using Entry = std::pair<std::unique_ptr<std::string>, std::unique_ptr<kron::histogram>>;
  static auto* names = new std::map<std::string, Entry>;
  std::lock_guard<std::mutex> lock(m);
  auto& e = (*names)[name];
  if (!e.second) {
    e.first = std::make_unique<std::string>(name);
    e.second = std::make_unique<kron::histogram>(e.first->c_str());
  }
  return reinterpret_cast<std::uintptr_t>(e.second.get());
}

void bind_probes(py::module_& m) {
  m.def("attached", &kron::attached, "True when probes record into a board");
  m.def("trace", [](unsigned group, std::uint64_t data) { kron::trace(group, data); }, py::arg("group"),
        py::arg("data"));
  m.def("resource", [](unsigned group, std::uint64_t data) { kron::resource(group, data); }, py::arg("group"),
        py::arg("data"));
  m.def("count", [](unsigned counter, std::uint64_t n) { kron::count(counter, n); }, py::arg("counter"),
        py::arg("n") = 1);
  m.def("thread_name", [](const std::string& name) { kron::thread_name(name.c_str()); }, py::arg("name"));
  m.def("phase", [](std::uint16_t id) { kron::phase(id); }, py::arg("id"));
  m.def("current_phase", [] { return kron::current_phase(); });
  m.def("site", &site, py::arg("name"), py::arg("kind"), py::arg("file"), py::arg("function"), py::arg("line"));
  m.def("named", &named, py::arg("site"), py::arg("value"), py::arg("what"));
  m.def("histogram", &histogram, py::arg("name"));
  m.def("record_latency", [](std::uintptr_t h, std::uint64_t ticks) {
    kron::record_latency(*reinterpret_cast<kron::histogram*>(h), ticks);
  }, py::arg("histogram"), py::arg("ticks"));
  m.def("vcount", [](unsigned index, std::uint64_t n) { kron::vcount(index, n); }, py::arg("index"), py::arg("n") = 1);
  m.def("now", [] { return kron::detail::now(); }, "the probes' clock: TSC ticks, or CLOCK_MONOTONIC ns");
}

// ---- reading -----------------------------------------------------------------------------------------------
// A sample as a numpy record: the file's 32-byte Trace record, field for field (kron/core/record.hpp), so that
// an uncompressed file's samples are the array itself. thread_cpu: the thread id in bits 0-21, the cpu in
// bits 22-31 (ERRATUM E180).
py::dtype sample_dtype() {
  py::dict d;
  d["names"] = py::make_tuple("kind", "size", "flags", "group", "phase", "source", "thread_cpu", "timestamp", "data");
  d["formats"] = py::make_tuple("<u2", "<u2", "u1", "u1", "<u2", "<u4", "<u4", "<u8", "<u8");
  d["offsets"] = py::make_tuple(0, 2, 4, 5, 6, 8, 12, 16, 24);
  d["itemsize"] = 32;
  return py::dtype::from_args(d);
}
static_assert(sizeof(record::TraceRecord) == 32 && offsetof(record::TraceRecord, thread) == 12 &&
              offsetof(record::TraceRecord, timestamp) == 16 && offsetof(record::TraceRecord, data) == 24);

// A decoded sample as the array's record: its first 32 bytes as the codec writes them (a Resource sample's
// counters are not in the array).
void put_sample(const Sample& s, record::TraceRecord& r) { r = codec::trace_record(s); }

// An open trace file: the Reader (validation, names, iteration) and, for the zero-copy path, the mapping.
class TraceFile {
 public:
  explicit TraceFile(const std::string& path) : path_(path), reader_(std::make_unique<tracefile::Reader>(path)) {
    for (const auto& n : reader_->names()) names_.add(n);
    zero_copy_ = check_zero_copy();
  }
  const tracefile::FileHeader& header() const { return reader_->header(); }
  bool zero_copy() const { return zero_copy_; }
  const tracefile::NameTable& names() const { return names_; }
  const std::vector<record::NameRecord>& name_records() const { return reader_->names(); }

  // Every sample: a view of the mapping where the file allows (zero_copy()), else decoded into a new array.
  py::array samples(py::object self) {
    if (zero_copy_) return view(self, 0, header().samples);
    // Decoded straight into the array (one copy of the samples in memory, not two): the header's count,
    // or, for an incomplete file (count 0), grown as the samples come.
    reader_->rewind();
    std::size_t cap = header().samples ? header().samples : 4096, used = 0;
    py::array a(sample_dtype(), std::vector<py::ssize_t>{static_cast<py::ssize_t>(cap)});
    while (std::size_t got = reader_->next_batch(batch_)) {
      if (used + got > cap) {  // only past the header's count (an incomplete file): grow
        cap = std::max(2 * cap, used + got);
        a.resize(std::vector<py::ssize_t>{static_cast<py::ssize_t>(cap)}, false);
      }
      auto* out = static_cast<record::TraceRecord*>(a.mutable_data()) + used;
      for (std::size_t i = 0; i < got; ++i) put_sample(batch_[i], out[i]);
      used += got;
    }
    if (used != cap) a.resize(std::vector<py::ssize_t>{static_cast<py::ssize_t>(used)}, false);
    return a;
  }
  // Samples [first, first + n) of a zero-copy file, as a read-only view whose base keeps the file open.
  py::array view(py::object self, std::uint64_t first, std::uint64_t n) {
    const std::uint8_t* p = map_->data() + header().header_size + first * sizeof(record::TraceRecord);
    py::array a(sample_dtype(), std::vector<py::ssize_t>{static_cast<py::ssize_t>(n)}, std::vector<py::ssize_t>{32}, p,
                self);
    py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    return a;
  }
  // Gives back the mapped pages of the samples below `first` (zero-copy batches: memory stays flat over a
  // file larger than memory). A view still held of them reads them in again from the file.
  void release(std::uint64_t first) {
    if (map_) map_->discard(0, header().header_size + first * sizeof(record::TraceRecord));
  }
  // The next batch of at most n decoded samples (the copy path of batches()); an empty array at the end.
  py::array next_batch(std::size_t n) {
    std::vector<record::TraceRecord> out;
    out.reserve(std::min<std::size_t>(n, header().samples ? header().samples : n));
    decode(out, n);
    return to_array(out.data(), out.size());
  }
  void rewind() { reader_->rewind(); }
  py::dict intervals(const std::string& info_path);
  py::dict histograms();
  py::dict counters();
  std::vector<std::string> warnings() const { return reader_->warnings(); }

 private:
  std::string path_;
  std::unique_ptr<tracefile::Reader> reader_;
  std::unique_ptr<MappedFile> map_;
  tracefile::NameTable names_;
  bool zero_copy_ = false;
  bool snapshots_read_ = false;

  std::vector<Sample> batch_ = std::vector<Sample>(4096);  // the Reader's batches, reused
  // Appends up to n samples, decoded, to `out`.
  void decode(std::vector<record::TraceRecord>& out, std::size_t n) {
    while (out.size() < n) {
      const std::size_t want = std::min(batch_.size(), n - out.size());
      const std::size_t got = reader_->next_batch(std::span(batch_.data(), want));
      if (got == 0) break;
      for (std::size_t i = 0; i < got; ++i) put_sample(batch_[i], out.emplace_back());
    }
  }
  static py::array to_array(const record::TraceRecord* p, std::size_t n) {
    py::array a(sample_dtype(), std::vector<py::ssize_t>{static_cast<py::ssize_t>(n)});
    if (n) std::memcpy(a.mutable_data(), p, n * sizeof *p);
    return a;
  }
  // The samples are the file's bytes when the file is complete, uncompressed, phased (1.4 or later: the
  // layout above) and its first `samples` records are all 32-byte Trace records (no Resource sample or
  // periodic snapshot among them). Each record's header word is checked, as the Reader would.
  bool check_zero_copy() {
    const tracefile::FileHeader& h = header();
    if (!reader_->complete() || reader_->compressed() || h.minor < 4) return false;
    if (h.samples > h.records_bytes / sizeof(record::TraceRecord)) return false;
    map_ = std::make_unique<MappedFile>(path_);
    if (map_->size() < h.header_size + h.records_bytes) return false;
    const std::uint8_t* p = map_->data() + h.header_size;
    const std::uint64_t want = record::header_word(record::RecordKind::Trace);
    constexpr std::uint64_t kStep = 8u << 20;  // the pages checked are given back 8 MiB at a time, as the Reader does
    std::uint64_t released = 0;
    for (std::uint64_t i = 0; i < h.samples; ++i, p += sizeof(record::TraceRecord)) {
      std::uint64_t w;
      std::memcpy(&w, p, 8);
      if ((w & record::kKindSizeMask) != want) return false;
      const std::uint64_t at = static_cast<std::uint64_t>(p - map_->data()) & ~(kStep - 1);
      if (at > released) map_->discard(released, at), released = at;
    }
    return true;
  }
  void read_snapshots() {  // the snapshots are kept by the Reader as it passes them: read to the end once
    if (snapshots_read_) return;
    reader_->rewind();
    std::vector<Sample> batch(4096);
    while (reader_->next_batch(batch) != 0) {
    }
    snapshots_read_ = true;
  }
};

// The matched intervals: named scopes (paired by the matcher itself) and, with an interval.info, its classes.
// Columns as numpy arrays; on_cpu (ticks) from the recording's scheduling switches (kron record --sched),
// -1 where the recording has none for the thread.
py::dict TraceFile::intervals(const std::string& info_path) {
  analysis::IntervalInfo info;
  if (!info_path.empty()) info = analysis::load_interval_info(info_path);
  reader_->rewind();
  std::vector<Sample> batch(4096);
  std::vector<record::SchedRecord> switches;
  if (header().sched_switches) {  // read ahead for them (they follow the samples), as kron rpt does
    while (reader_->next_batch(batch) != 0) {
    }
    switches = reader_->sched_switches();
    reader_->rewind();
  }
  const analysis::OnCpuTimeline timeline(switches);
  analysis::RptOptions ro;
  analysis::Matcher m(info, ro, ~std::uint64_t{0}, &names_);
  std::vector<analysis::Occurrence> occ;
  m.on_interval = [&](const analysis::Occurrence& o) { occ.push_back(o); };
  while (std::size_t n = reader_->next_batch(batch)) m.feed_batch(std::span(batch.data(), n));
  m.finish();
  const std::size_t n = occ.size();
  py::array_t<std::uint64_t> begin(n), end(n), duration(n), value(n);
  py::array_t<std::int64_t> on_cpu(n);
  py::array_t<std::uint32_t> source(n), thread(n);
  py::array_t<std::uint16_t> name_id(n);
  py::list names;
  std::map<std::pair<unsigned, unsigned>, py::str> part_names;
  for (std::size_t i = 0; i < n; ++i) {
    const analysis::Occurrence& o = occ[i];
    const analysis::StreamKey& k = m.streams()[o.stream];
    begin.mutable_at(i) = o.start, end.mutable_at(i) = o.end, duration.mutable_at(i) = o.duration;
    value.mutable_at(i) = o.value, name_id.mutable_at(i) = o.name_id;
    source.mutable_at(i) = k.source, thread.mutable_at(i) = k.by_thread ? k.lane : 0;
    std::int64_t cpu = -1;
    if (k.by_thread && !timeline.empty()) {
      const std::uint64_t a = timeline.running_at(k.source, k.lane, o.start);
      const std::uint64_t b = timeline.running_at(k.source, k.lane, o.end);
      if (a != analysis::OnCpuTimeline::kNone && b != analysis::OnCpuTimeline::kNone)
        cpu = static_cast<std::int64_t>(b - a);
    }
    on_cpu.mutable_at(i) = cpu;
    auto key = std::make_pair(o.interval, o.part);
    auto it = part_names.find(key);
    if (it == part_names.end()) it = part_names.emplace(key, py::str(m.part_name(o.interval, o.part))).first;
    names.append(it->second);
  }
  py::dict d;
  d["name"] = names, d["source"] = source, d["thread"] = thread, d["begin"] = begin, d["end"] = end;
  d["duration"] = duration, d["on_cpu"] = on_cpu, d["value"] = value, d["name_id"] = name_id;
  return d;
}

// Histograms merged as kron hist merges them: name -> phase -> {count, sum, min, max, buckets (976 counts),
// bucket_lo, bucket_hi}.
py::dict TraceFile::histograms() {
  read_snapshots();
  analysis::SnapshotSum mg;
  mg.add(reader_->snapshots());
  const analysis::SnapshotTotals r = mg.result();
  py::array_t<std::uint64_t> lo(stats::kHistBuckets), hi(stats::kHistBuckets);
  for (unsigned b = 0; b < stats::kHistBuckets; ++b)
    lo.mutable_at(b) = stats::bucket_range(b).lo, hi.mutable_at(b) = stats::bucket_range(b).hi;
  py::dict out;
  for (const auto& [name, phases] : r.hists) {
    py::dict per;
    for (const auto& [phase, h] : phases) {
      py::dict e;
      e["count"] = h.count(), e["sum"] = h.sum, e["min"] = h.count() ? h.min : 0, e["max"] = h.max;
      py::array_t<std::uint64_t> b(stats::kHistBuckets);
      std::memcpy(b.mutable_data(), h.buckets.data(), sizeof h.buckets);
      e["buckets"] = b, e["bucket_lo"] = lo, e["bucket_hi"] = hi;
      per[py::int_(phase)] = e;
    }
    out[py::str(name)] = per;
  }
  return out;
}
// Virtual counters summed across threads: phase -> {index: value}.
py::dict TraceFile::counters() {
  read_snapshots();
  analysis::SnapshotSum mg;
  mg.add(reader_->snapshots());
  py::dict out;
  for (const auto& [phase, cs] : mg.result().counters) {
    py::dict per;
    for (const auto& [index, v] : cs) per[py::int_(index)] = v;
    out[py::int_(phase)] = per;
  }
  return out;
}

py::dict header_dict(const TraceFile& t) {
  const tracefile::FileHeader& h = t.header();
  py::dict d;
  d["version"] = py::make_tuple(h.major, h.minor);
  d["clock_hz"] = h.clock_hz, d["start_ticks"] = h.start_ticks, d["start_realtime_ns"] = h.start_realtime_ns;
  d["samples"] = h.samples, d["overruns"] = h.overruns, d["overwritten"] = h.overwritten;
  d["complete"] = bool(h.flags & tracefile::kFlagComplete);
  d["compressed"] = bool(h.flags & tracefile::kFlagCompressed);
  d["program"] = std::string(tracefile::program(h)), d["mpi_rank"] = h.mpi_rank;
  d["stat_lost"] = h.stat_lost, d["snapshots"] = h.snapshots;
  return d;
}

void bind_reading(py::module_& m) {
  py::register_exception<InputError>(m, "InputError", PyExc_ValueError);
  py::class_<TraceFile>(m, "TraceFile")
      .def(py::init<const std::string&>(), py::arg("path"))
      .def_property_readonly("header", &header_dict)
      .def_property_readonly("zero_copy", &TraceFile::zero_copy)
      .def("samples", [](py::object self) { return self.cast<TraceFile&>().samples(self); })
      .def("view", [](py::object self, std::uint64_t first, std::uint64_t n) {
        TraceFile& t = self.cast<TraceFile&>();
        if (!t.zero_copy() || first > t.header().samples || n > t.header().samples - first)
          throw py::index_error("view: not a zero-copy file, or past its samples");
        return t.view(self, first, n);
      })
      .def("next_batch", &TraceFile::next_batch, py::arg("n"))
      .def("rewind", &TraceFile::rewind)
      .def("release", &TraceFile::release, py::arg("first"))
      .def("intervals", &TraceFile::intervals, py::arg("info") = std::string())
      .def("histograms", &TraceFile::histograms)
      .def("counters", &TraceFile::counters)
      .def("warnings", &TraceFile::warnings)
      .def("sites", [](const TraceFile& t) {  // id -> (name, "file:line function"): named probes' sites
        py::dict d;
        for (unsigned id = 1; id <= t.names().max_id(); ++id)
          if (const record::NameRecord* s = t.names().site(static_cast<std::uint16_t>(id)))
            d[py::int_(id)] = py::make_tuple(std::string(s->name, ::strnlen(s->name, sizeof s->name)),
                                             tracefile::NameTable::location(*s));
        return d;
      })
      .def("thread_name", [](const TraceFile& t, std::uint32_t source, std::uint32_t thread) {
        return std::string(t.names().thread(source, thread));
      });
}

}  // namespace
}  // namespace kron::python

PYBIND11_MODULE(_kron, m) {
  m.doc() = "kron's probes and trace reading (compiled part; use the package kron)";
  kron::python::bind_probes(m);
  kron::python::bind_reading(m);
}
