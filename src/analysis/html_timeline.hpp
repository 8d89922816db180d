// kron rpt --html's timeline: a TimelineSink (timeline.hpp) that keeps, from the one walk of the recording,
// what the page draws: a lane per thread (grouped by process, an MPI recording's by rank), the scopes and
// intervals as nested bars, the threads' scheduling states (kron record --sched), the messages between
// ranks (MPI, class 4), and the page's summary (program, span, on-CPU share per thread, losses).
//
// ERRATUM E420: the page stays small whatever the recording's length. Up to PageLimits::bars bars (and
// stretches, arrows) are kept exactly; past that the longest are kept and every bar and stretch also goes
// into a grid of PageLimits::columns time columns per lane and depth (the column width doubles, merging
// pairs, as the recording grows), which the page draws where bars were left out: a column shows how much
// of it scopes covered and the name that covered most of it (a running estimate: the name with the
// largest share among the contributions seen, each name's contributions summed while it stays ahead).
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/timeline.hpp"

namespace kron::analysis {

struct PageLimits {
  std::size_t bars = 50'000;       // bars kept exactly (the longest, past this)
  std::size_t stretches = 50'000;  // scheduling stretches kept exactly
  std::size_t arrows = 20'000;     // messages drawn (the first)
  unsigned columns = 2048;         // columns of the grid that sums up what was left out
  unsigned depths = 16;            // nesting levels drawn per lane (deeper ones are counted)
};

class PageSink final : public TimelineSink {
 public:
  explicit PageSink(PageLimits lim = {}) : lim_(lim) {}
  Needs needs() const override { return Needs().in_batches().matched().then({Part::Stretches, Part::Messages}); }
  void begin(Timeline& tl) override;
  void samples(std::span<const Sample> batch) override;
  void interval(const Occurrence& o) override;
  void sched_stretch(const SchedStretch& x) override;
  void mpi_message(const record::MpiRecord& send, const record::MpiRecord& recv) override;
  void end() override;

  // The timeline's data, one JSON object (the page's script reads it; its layout is in html_timeline.cpp).
  std::string data_json() const;

  // For the summary.
  struct LaneInfo {
    std::string group, label;                               // process (or rank) and thread labels
    std::string process;                                    // the process's own name ("" when unknown)
    std::uint64_t running = 0, waiting = 0, preempted = 0;  // ns in each state (kron record --sched)
    std::uint64_t bars = 0;                                 // scopes and intervals on it
  };
  // The lanes as the page shows them: by rank, then process, then thread (or CPU) number.
  std::vector<LaneInfo> lanes() const;
  std::uint64_t span_ns() const { return span_; }
  const std::string& program() const { return program_; }
  bool has_states() const { return stretches_seen_ > 0; }
  std::uint64_t bars_seen() const { return bars_seen_; }
  std::uint64_t bars_kept() const { return bars_.size(); }
  std::uint64_t lost_samples() const { return lost_; }

 private:
  struct Bar {
    std::uint64_t start, dur;  // ns since the first sample
    std::int64_t value;        // a named scope's (DECISION D30)
    std::uint32_t lane, name;
    std::uint16_t depth;
    bool operator>(const Bar& o) const { return dur > o.dur; }
  };
  struct Stretch {
    std::uint64_t start, dur;
    std::uint32_t lane;
    std::uint8_t state;  // 0 running, 1 preempted (runnable), 2 waiting (blocked)
    std::uint16_t cpu;
    bool operator>(const Stretch& o) const { return dur > o.dur; }
  };
  struct Cell {  // a grid column of one lane and depth
    float covered = 0, best = 0;
    std::uint32_t name = 0;
  };
  struct StateCell {
    float ns[3] = {0, 0, 0};
  };
  std::uint32_t lane_of(std::uint32_t source, std::uint32_t lane, bool by_thread);
  std::uint32_t name_of(unsigned interval, unsigned part);
  void widen(std::uint64_t end_ns);  // doubles the column width until end_ns fits
  void grid_bar(const Bar& b);
  void grid_stretch(const Stretch& s);
  template <class T>
  void keep(std::vector<T>& v, const T& x, std::size_t limit, std::uint64_t& dropped);

  PageLimits lim_;
  Timeline* tl_ = nullptr;
  std::string program_;
  std::uint64_t span_ = 0, lost_ = 0;
  std::vector<LaneInfo> lanes_;
  std::vector<std::uint32_t> order() const;  // lane numbers in the page's order
  std::vector<std::uint32_t> lane_source_, lane_rank_;
  std::vector<std::uint64_t> lane_key_;
  std::unordered_map<std::uint64_t, std::uint32_t> lane_of_key_;
  std::unordered_map<std::uint32_t, std::uint32_t> rank_of_source_;
  std::vector<std::uint32_t> lane_of_stream_;  // the matcher's stream -> lane
  std::vector<std::string> names_, locations_;
  std::unordered_map<std::uint64_t, std::uint32_t> name_of_part_;
  std::vector<std::vector<std::uint64_t>> row_end_;  // per matcher stream: interval.info rows' last ends
  std::vector<Bar> bars_;
  std::vector<Stretch> stretches_;
  std::vector<std::uint64_t> arrows_;  // lane, t, lane, t, bytes, tag, kind per arrow
  std::uint64_t bars_seen_ = 0, bars_dropped_ = 0, stretches_seen_ = 0, stretches_dropped_ = 0;
  std::uint64_t arrows_dropped_ = 0, deeper_ = 0;
  std::uint64_t col_ns_ = 1;   // grid column width
  std::uint64_t base_ns_ = 0;  // a recording without samples: its first switch
  bool base_known_ = false;
  std::vector<std::vector<std::vector<Cell>>> grid_;  // [lane][depth][column]
  std::vector<std::vector<StateCell>> state_grid_;    // [lane][column]
};

}  // namespace kron::analysis
