// kron expand: 003 mk_expand. The work is in src/analysis/expand.cpp.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/expand.hpp"
#include "tools/command.hpp"
#include "tools/input_options.hpp"

namespace kron::tools {
namespace {

struct Args {
  InputArgs in;
  analysis::ExpandOptions opt;
  std::string r = "x", s = "x", t = "x", u = "x";
};

int run(const Args& a) {
  analysis::ExpandOptions opt = a.opt;
  opt.counter_radix = analysis::parse_radix(a.r);
  opt.source_radix = analysis::parse_radix(a.s);
  opt.ts_radix = analysis::parse_radix(a.t);
  opt.data_radix = analysis::parse_radix(a.u);
  analysis::Merged in = a.in.open();
  bool kron_fields = false;
  for (const auto& i : in.inputs()) kron_fields |= i->format() == analysis::InputFormat::Kron;
  const auto chip = in.inputs().front()->chip();
  analysis::Expander ex(opt, chip, kron_fields, in.ts_mask());
  ex.set_names(&in.names());
  // Lines go straight into one large buffer written with fwrite: no per-line allocation or copy.
  constexpr std::size_t kFlushAt = 1 << 20;
  std::vector<char> buf(kFlushAt + analysis::Expander::kMaxLine);
  char* p = buf.data();
  char* const flush_at = buf.data() + kFlushAt;
  auto flush = [&] {
    const auto n = static_cast<std::size_t>(p - buf.data());
    if (n && std::fwrite(buf.data(), 1, n, stdout) != n) throw std::runtime_error("write to standard output failed");
    p = buf.data();
  };
  if (opt.heading) {
    std::string h;
    ex.heading(h);
    std::fwrite(h.data(), 1, h.size(), stdout);
  }
  std::vector<Sample> batch(256);
  try {
    while (const std::size_t n = in.next_batch(batch))
      for (std::size_t k = 0; k < n; ++k) {
        p = ex.line(batch[k], p);
        if (p >= flush_at) flush();
      }
  } catch (...) {
    flush();  // every line in the buffer is a whole, fully decoded sample
    throw;
  }
  flush();
  const bool ok = std::fflush(stdout) == 0;
  for (const auto& w : in.warnings()) std::fprintf(stderr, "kron: warning: %s\n", w.c_str());
  return ok ? kExitOk : kExitFailed;
}

KRON_COMMAND("expand", "print samples one a line, human readable (003 mk_expand)", 40, [](CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.set_help_flag("--help", "print this help");  // -h is mk_expand's heading
  a->in.add(app);
  app.add_flag("-c", a->opt.counters, "print the counters of resource samples");
  app.add_flag("-e", a->opt.elapsed, "print elapsed time (ticks since the first sample) instead of the timestamp");
  app.add_flag("-h", a->opt.heading, "print a heading");
  app.add_option("-r", a->r, "radix of resource counters: d, o or x (default x)")
      ->check(CLI::IsMember({"d", "o", "x"}));
  app.add_option("-s", a->s, "radix of the source address: d, o or x")->check(CLI::IsMember({"d", "o", "x"}));
  app.add_option("-t", a->t, "radix of the timestamp: d, o or x")->check(CLI::IsMember({"d", "o", "x"}));
  app.add_option("-u", a->u, "radix of the user data: d, o or x")->check(CLI::IsMember({"d", "o", "x"}));
  app.add_flag("-x", a->opt.header_bits, "expand the header byte into its bits");
  return [a] { return run(*a); };
});

}  // namespace
}  // namespace kron::tools
