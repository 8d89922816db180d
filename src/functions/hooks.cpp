// kron's function hooks (kron-functions.pc, docs/functions.md): a program compiled with -finstrument-functions
// calls __cyg_profile_func_enter/exit at every function's entry and exit; these record them as the begin and
// end of one named site whose value is the function's run-time address (NameKind::Function). Names come at
// report time from the program's symbols and DWARF (src/analysis/functions.hpp), through the load map these
// hooks write into the board's name table (NameKind::Module entries: each loaded object's path and load bias).
//
// The hot path, whole: the probe's control-word test (no board: that one predictable branch, and return);
// the thread's own shadow stack (a push or a pop); with a run-time filter, one probe of the filter cache; then
// the named probe's store of one record (kron.hpp put_trace_). Every function here is no_instrument_function,
// and this library is compiled without -finstrument-functions.
//
// Pairing (ERRATUM E451): the shadow stack is kMaxDepth deep; calls deeper than that are not recorded (their
// entries and exits counted). An exit whose address is not the top's (a longjmp, a C++ exception through
// code built without the hooks) closes the frames above the one it names at that moment, counted; an exit
// that names no open frame is counted and dropped. At process exit the frames still open (exit() called
// below main) are closed. The counts go into the recording as named events (docs/functions.md "Pairing").
//
// Depends on nothing but the probe (kron_probe, kron_board) and libc: no libdw at run time.
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "elf_symbols.hpp"
#include "filter.hpp"
#include "kron/kron.hpp"

#define KRON_NOINSTR __attribute__((no_instrument_function))

// The filter level (group) of the function samples: KRON_NAMED_GROUP unless built otherwise.
#ifndef KRON_FUNCTIONS_GROUP
#define KRON_FUNCTIONS_GROUP KRON_NAMED_GROUP
#endif

namespace {

constexpr unsigned kMaxDepth = 512;  // ERRATUM E451: the shadow stack's depth
constexpr std::uintptr_t kSkip = 1;  // low bit of a frame: entered, not recorded (filtered out)
const char* const kFilterEnv = "KRON_FUNCTIONS_FILTER";

kron_site g_site{"(functions)", "", "", 0, KRON_SITE_FUNCTION, 0, 0};

struct Shadow {  // zero-initialized members: a constant initializer, as constinit asks (clang checks it)
  std::uint32_t depth = 0;
  std::uintptr_t frames[kMaxDepth] = {};
};
KRON_CONSTINIT thread_local Shadow t_shadow KRON_TLS_MODEL;

// What went unpaired (ERRATUM E451), summed over threads: slow paths only.
std::atomic<std::uint64_t> g_past_depth{0}, g_unwound{0}, g_stray{0}, g_closed_at_exit{0};

// ---- the run-time filter: a decision per function address, cached (lock-free open addressing) ----------------
constexpr std::size_t kCacheSlots = 1u << 16;
struct CacheSlot {
  std::atomic<std::uintptr_t> fn;
  std::atomic<std::uint8_t> state;  // 0 deciding, 1 recorded, 2 left out
};
CacheSlot* g_cache = nullptr;  // set once at start-up, when a filter is in force
std::atomic<std::uint64_t> g_cache_full{0};
kron::functions::Filter* g_filter = nullptr;

struct Module {
  std::uintptr_t bias;
  std::string path;
  std::unique_ptr<kron::functions::ElfSymbols> syms;  // loaded at the first lookup in it
  bool tried = false;
};
std::mutex g_modules_mutex;
std::vector<Module> g_modules;

KRON_NOINSTR std::string object_path(const char* name) {
  if (name && *name) return name;
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

// Decides whether `fn` is recorded: its object (dladdr1), its symbol and source file (the object's symbol
// table), the filter's rules. A function whose symbol cannot be found is recorded.
KRON_NOINSTR bool decide(std::uintptr_t fn) {
  Dl_info info{};
  link_map* lm = nullptr;
  if (!::dladdr1(reinterpret_cast<void*>(fn), &info, reinterpret_cast<void**>(&lm), RTLD_DL_LINKMAP) || !lm)
    return true;
  std::lock_guard<std::mutex> lock(g_modules_mutex);
  Module* m = nullptr;
  for (auto& x : g_modules)
    if (x.bias == lm->l_addr) m = &x;
  if (!m) {
    g_modules.push_back({lm->l_addr, object_path(lm->l_name), nullptr, false});
    m = &g_modules.back();
  }
  if (!m->tried) {
    m->tried = true;
    auto s = std::make_unique<kron::functions::ElfSymbols>();
    std::string error;
    if (s->load(m->path.c_str(), error))
      m->syms = std::move(s);
    else
      std::fprintf(stderr, "kron functions: filter: %s (its functions are recorded)\n", error.c_str());
  }
  kron::functions::ElfSymbols::Found f;
  if (!m->syms || !m->syms->lookup(fn - m->bias, f)) return true;
  const std::string mangled(f.name);
  int status = 0;
  char* d = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  const std::string demangled = status == 0 && d ? d : mangled;
  std::free(d);
  return !g_filter->excluded(mangled, demangled, f.file, m->path);
}

KRON_NOINSTR bool filtered_in(std::uintptr_t fn) {
  std::size_t i = (fn * 0x9E3779B97F4A7C15ull) >> 48;
  for (std::size_t probe = 0; probe < 64; ++probe, i = (i + 1) & (kCacheSlots - 1)) {
    CacheSlot& s = g_cache[i];
    // Acquire: pairs with the release store of `state` by the thread that decided.
    std::uintptr_t k = s.fn.load(std::memory_order_acquire);
    if (k == fn) {
      const std::uint8_t st = s.state.load(std::memory_order_acquire);
      return st == 0 ? decide(fn) : st == 1;
    }
    if (k == 0 && s.fn.compare_exchange_strong(k, fn, std::memory_order_acq_rel)) {
      const bool in = decide(fn);
      s.state.store(in ? 1 : 2, std::memory_order_release);
      return in;
    }
    if (k == fn) return decide(fn);  // another thread took the slot for fn a moment ago
  }
  g_cache_full.fetch_add(1, std::memory_order_relaxed);
  return decide(fn);  // no room: decided every time (slow, counted)
}

// ---- the records -------------------------------------------------------------------------------------------
KRON_NOINSTR inline void put(std::uintptr_t fn, kron::Named what) {
  kron::named(g_site, KRON_FUNCTIONS_GROUP, fn, what);
}

KRON_NOINSTR void event(kron_site& site, std::uint64_t n) {
  if (n) kron::named(site, KRON_FUNCTIONS_GROUP, n, kron::Named::Event);
}

// An exit whose address is not the top frame's (ERRATUM E451): close the frames above the one it names.
KRON_NOINSTR void exit_mismatch(Shadow& t, std::uintptr_t fn) {
  const std::uint32_t top = t.depth < kMaxDepth ? t.depth : kMaxDepth;
  std::uint32_t k = top;
  while (k > 0 && (t.frames[k - 1] & ~kSkip) != fn) --k;
  if (k == 0) {
    g_stray.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  for (std::uint32_t j = top; j > k; --j) {
    if (!(t.frames[j - 1] & kSkip)) put(t.frames[j - 1], kron::Named::End);
    g_unwound.fetch_add(1, std::memory_order_relaxed);
  }
  t.depth = k - 1;
  if (!(t.frames[k - 1] & kSkip)) put(fn, kron::Named::End);
}

// The load map: every loaded object's path and load bias, as Module entries of the board's name table.
KRON_NOINSTR int add_module(dl_phdr_info* info, std::size_t, void* data) {
  auto* seen = static_cast<std::vector<std::pair<std::uintptr_t, std::string>>*>(data);
  const std::string path = object_path(info->dlpi_name);
  if (path.empty() || path.find("linux-vdso") != std::string::npos) return 0;
  for (const auto& s : *seen)
    if (s.first == info->dlpi_addr && s.second == path) return 0;
  seen->emplace_back(info->dlpi_addr, path);
  char bias[kron::record::kNameBytes];
  std::snprintf(bias, sizeof bias, "0x%" PRIxPTR, static_cast<std::uintptr_t>(info->dlpi_addr));
  kron_site m{bias, path.c_str(), "", 0, KRON_SITE_MODULE, 0, 0};
  kron_site_register(&m);
  return 0;
}
KRON_NOINSTR void write_load_map() {
  static std::mutex mu;
  static std::vector<std::pair<std::uintptr_t, std::string>> seen;
  std::lock_guard<std::mutex> lock(mu);
  if (kron::attached()) ::dl_iterate_phdr(add_module, &seen);
}

// ERRATUM E396: the counts' location reads "libkron_functions", never kron's source path.
kron_site g_ev_depth{"kron functions: calls past the depth limit", "", "libkron_functions", 0, KRON_SITE_EVENT, 0, 0};
kron_site g_ev_unwound{
    "kron functions: frames closed by a later exit", "", "libkron_functions", 0, KRON_SITE_EVENT, 0, 0};
kron_site g_ev_stray{"kron functions: exits without an entry", "", "libkron_functions", 0, KRON_SITE_EVENT, 0, 0};
kron_site g_ev_closed{"kron functions: frames closed at exit", "", "libkron_functions", 0, KRON_SITE_EVENT, 0, 0};
kron_site g_ev_cache{
    "kron functions: filter decisions without a cache slot", "", "libkron_functions", 0, KRON_SITE_EVENT, 0, 0};

KRON_NOINSTR void at_exit() {
  Shadow& t = t_shadow;  // the main thread's frames still open (exit() below main)
  const std::uint32_t top = t.depth < kMaxDepth ? t.depth : kMaxDepth;
  for (std::uint32_t j = top; j > 0; --j) {
    if (!(t.frames[j - 1] & kSkip)) put(t.frames[j - 1], kron::Named::End);
    g_closed_at_exit.fetch_add(1, std::memory_order_relaxed);
  }
  t.depth = 0;
  write_load_map();  // objects dlopen()ed since start-up
  event(g_ev_depth, g_past_depth.load());
  event(g_ev_unwound, g_unwound.load());
  event(g_ev_stray, g_stray.load());
  event(g_ev_closed, g_closed_at_exit.load());
  event(g_ev_cache, g_cache_full.load());
}

// Start-up: attach (kron_probe's own start-up attach may not have run yet), the load map, the filter.
KRON_NOINSTR __attribute__((constructor)) void start() {
  if (!kron::attach(nullptr)) return;
  write_load_map();
  std::atexit(at_exit);
  const char* path = std::getenv(kFilterEnv);
  if (!path || !*path) return;
  auto* f = new kron::functions::Filter;
  kron::functions::FilterError error;
  if (!kron::functions::load_filter(path, *f, error)) {
    std::fprintf(stderr, "kron functions: %s: %s (no function is filtered)\n", kFilterEnv, error.text().c_str());
    delete f;
    return;
  }
  g_cache = new CacheSlot[kCacheSlots]();
  g_filter = f;
}

}  // namespace

extern "C" {

KRON_NOINSTR void __cyg_profile_func_enter(void* this_fn, void* /*call_site*/) {
  const std::uint32_t need = (1u << (KRON_FUNCTIONS_GROUP & 15u)) | kron::board::kCtlEnable;
  // Relaxed, as kron::trace(): without a board the word is 0 and this is the whole hook.
  if ((kron::detail::g_control->load(std::memory_order_relaxed) & need) != need) return;
  Shadow& t = t_shadow;
  const std::uint32_t d = t.depth++;
  if (d >= kMaxDepth) [[unlikely]] {
    g_past_depth.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const auto fn = reinterpret_cast<std::uintptr_t>(this_fn);
  if (g_filter && !filtered_in(fn)) [[unlikely]] {
    t.frames[d] = fn | kSkip;
    return;
  }
  t.frames[d] = fn;
  put(fn, kron::Named::Begin);
}

KRON_NOINSTR void __cyg_profile_func_exit(void* this_fn, void* /*call_site*/) {
  const std::uint32_t need = (1u << (KRON_FUNCTIONS_GROUP & 15u)) | kron::board::kCtlEnable;
  if ((kron::detail::g_control->load(std::memory_order_relaxed) & need) != need) return;
  Shadow& t = t_shadow;
  const auto fn = reinterpret_cast<std::uintptr_t>(this_fn);
  if (t.depth > kMaxDepth) [[unlikely]] {
    --t.depth;  // a call past the depth limit returns
    return;
  }
  if (t.depth == 0 || (t.frames[t.depth - 1] & ~kSkip) != fn) [[unlikely]]
    return exit_mismatch(t, fn);
  const std::uintptr_t f = t.frames[--t.depth];
  if (!(f & kSkip)) put(fn, kron::Named::End);
}

}  // extern "C"
