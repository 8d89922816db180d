// Function names of a recording made with the function hooks: functions.hpp.
#include "analysis/functions.hpp"

#include <cxxabi.h>
#include <elfutils/libdwfl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>

#include "kron/core/error.hpp"

namespace kron::analysis {
namespace {

std::string text(const char* s, std::size_t cap) { return std::string(s, strnlen(s, cap)); }

// A Function site's value is a code address (docs/functions.md), read by the one decoder (DECISION D30) as
// every value is. DECISION D32: an x86-64 user-space address is below 2^47, so sign extension leaves it as it
// was recorded.
std::uint64_t address_of(std::uint64_t data) { return static_cast<std::uint64_t>(record::named_value_of(data)); }

bool parse_bias(const std::string& s, std::uint64_t& out) {
  if (s.size() < 3 || s.size() > 18 || s[0] != '0' || s[1] != 'x') return false;
  out = 0;
  for (std::size_t i = 2; i < s.size(); ++i) {
    const char c = s[i];
    const int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (v < 0) return false;
    out = out << 4 | static_cast<std::uint64_t>(v);
  }
  return true;
}

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string demangle(const char* sym) {
  int status = 0;
  char* d = abi::__cxa_demangle(sym, nullptr, nullptr, &status);
  std::string out = status == 0 && d ? d : sym;
  std::free(d);
  return out;
}

void copy_to(char* dst, std::size_t cap, const std::string& s, bool keep_end) {
  std::memset(dst, 0, cap);
  if (s.size() < cap) {
    std::memcpy(dst, s.data(), s.size());
  } else if (keep_end) {
    std::memcpy(dst, s.data() + s.size() - (cap - 1), cap - 1);
  } else {  // ERRATUM E453: a longer name keeps its start and ends in "..."
    std::memcpy(dst, s.data(), cap - 4);
    std::memcpy(dst + cap - 4, "...", 3);
  }
}

}  // namespace

std::vector<LoadedObject> load_map(std::span<const record::NameRecord> names, const std::string& file,
                                   std::uint64_t names_offset) {
  std::vector<LoadedObject> out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto& r = names[i];
    if (r.name_kind != record::NameKind::Module) continue;
    const std::uint64_t at = names_offset + i * sizeof(record::NameRecord);
    LoadedObject o;
    o.source = r.source;
    o.path = text(r.file, sizeof r.file);
    const std::string bias = text(r.name, sizeof r.name);
    if (!parse_bias(bias, o.bias))
      throw InputError::at_offset(
          file, at + offsetof(record::NameRecord, name),
          "load map entry: load bias '" + bias.substr(0, 20) + "' is not 0x and 1-16 lowercase hex digits");
    if (o.path.empty() || o.path[0] != '/')
      throw InputError::at_offset(file, at + offsetof(record::NameRecord, file),
                                  "load map entry: the object's path is not absolute");
    out.push_back(std::move(o));
  }
  return out;
}

// ---- Symbolizer: one libdwfl session per process ------------------------------------------------------------
struct Symbolizer::Process {
  Dwfl* dwfl = nullptr;
  std::vector<LoadedObject> objects;
};

namespace {
char* g_debuginfo_path = nullptr;  // libdwfl's default (.debug, /usr/lib/debug)
const Dwfl_Callbacks kCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &g_debuginfo_path,
};
}  // namespace

Symbolizer::Symbolizer(const std::vector<LoadedObject>& objects) {
  for (const auto& o : objects) {
    auto& p = procs_[o.source];
    if (!p) p = std::make_unique<Process>();
    p->objects.push_back(o);
  }
  for (auto& [source, p] : procs_) {
    p->dwfl = dwfl_begin(&kCallbacks);
    if (!p->dwfl) continue;
    dwfl_report_begin(p->dwfl);
    // A file that cannot be read (moved, removed, not ELF) is left out: its addresses keep their offsets.
    for (const auto& o : p->objects)
      dwfl_report_elf(p->dwfl, base_name(o.path).c_str(), o.path.c_str(), -1, o.bias, true);
    dwfl_report_end(p->dwfl, nullptr, nullptr);
  }
}

Symbolizer::~Symbolizer() {
  for (auto& [source, p] : procs_)
    if (p->dwfl) dwfl_end(p->dwfl);
}

Symbolizer::Name Symbolizer::resolve(std::uint32_t source, std::uint64_t address) {
  Name n;
  const auto it = procs_.find(source);
  Process* p = it == procs_.end() ? nullptr : it->second.get();
  Dwfl_Module* m = p && p->dwfl ? dwfl_addrmodule(p->dwfl, address) : nullptr;
  if (m) {
    if (const char* sym = dwfl_module_addrname(m, address)) {
      n.name = demangle(sym);
      n.symbol = true;
    }
    if (Dwfl_Line* line = dwfl_module_getsrc(m, address)) {
      int lineno = 0;
      if (const char* f = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr)) {
        n.file = f;
        n.line = static_cast<std::uint32_t>(lineno > 0 ? lineno : 0);
      }
    }
  }
  if (!n.symbol) {  // the object and the offset in it (the greatest load bias at or below the address)
    const LoadedObject* best = nullptr;
    if (p)
      for (const auto& o : p->objects)
        if (o.bias <= address && (!best || o.bias > best->bias)) best = &o;
    n.name =
        best ? fmt::format("{}+{:#x}", base_name(best->path), address - best->bias) : fmt::format("{:#x}", address);
  }
  return n;
}

// ---- FunctionNames --------------------------------------------------------------------------------------------
std::unique_ptr<FunctionNames> FunctionNames::scan(const std::string& path, const tracefile::Reader& r, bool salvage) {
  auto f = std::unique_ptr<FunctionNames>(new FunctionNames);
  std::uint32_t max_id = 0;
  bool any = false;
  for (const auto& n : r.names()) {
    if (!record::name_has_id(n.name_kind)) continue;
    max_id = std::max<std::uint32_t>(max_id, n.id);
    if (n.name_kind != record::NameKind::Function) continue;
    if (f->is_function_.size() <= n.id) f->is_function_.resize(std::size_t{n.id} + 1, false);
    f->is_function_[n.id] = any = true;
  }
  if (!any) return nullptr;
  // The addresses, read ahead (--salvage reads ahead as it reads the samples).
  std::set<Key> seen;
  {
    tracefile::Reader ahead(path, tracefile::ReadOptions{salvage});
    std::vector<Sample> batch(4096);
    while (const std::size_t got = ahead.next_batch(batch))
      for (std::size_t k = 0; k < got; ++k) {
        const Sample& s = batch[k];
        if (!(s.flags & kFlagNamed)) continue;
        const std::uint16_t id = record::name_id_of(s.data);
        if (id < f->is_function_.size() && f->is_function_[id]) seen.insert({s.source, address_of(s.data)});
      }
  }
  const auto objects = load_map(r.names(), path, r.header().names_offset);
  Symbolizer sym(objects);
  std::uint32_t next = max_id + 1;
  for (const auto& [source, address] : seen) {
    if (next >= record::kNoNameId) {  // ERRATUM E453: ids run out; the samples keep the function site's name
      ++f->no_id_;
      continue;
    }
    const Symbolizer::Name n = sym.resolve(source, address);
    record::NameRecord e{};
    e.h = record::RecordHeader{record::RecordKind::Names, sizeof(record::NameRecord), 0, 0, {0}};
    e.name_kind = record::NameKind::Scope;
    e.id = static_cast<std::uint16_t>(next++);
    e.source = source;
    e.line = n.line;
    copy_to(e.name, sizeof e.name, n.name, false);
    copy_to(e.file, sizeof e.file, n.file, true);
    if (!n.symbol) ++f->unnamed_;
    f->id_of_.emplace(Key{source, address}, e.id);
    f->names_.push_back(e);
  }
  return f;
}

void FunctionNames::rename(std::span<Sample> batch) const {
  for (Sample& s : batch) {
    if (!(s.flags & kFlagNamed)) continue;
    const std::uint16_t id = record::name_id_of(s.data);
    if (id >= is_function_.size() || !is_function_[id]) continue;
    const std::uint64_t address = address_of(s.data);
    const auto it = id_of_.find(Key{s.source, address});
    if (it != id_of_.end()) s.data = record::named_data(it->second, address);
  }
}

}  // namespace kron::analysis
