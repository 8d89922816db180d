// What every export format is: a sink of the timeline (analysis::TimelineSink) that counts what it wrote
// in an ExportStats. run_sink() makes one, walks the timeline into it and returns its counts.
#pragma once
#include <utility>

#include "analysis/timeline.hpp"
#include "exports/exports.hpp"

namespace kron::exports {

// Sink(args..., stats): the format's sink, constructed with its output and the counts it fills.
template <class Sink, class... Args>
ExportStats run_sink(analysis::Timeline& tl, Args&&... args) {
  ExportStats st;
  Sink sink(std::forward<Args>(args)..., st);
  tl.walk(sink);
  return st;
}

}  // namespace kron::exports
