// Named probes and thread names (include/kron/kron.hpp KRON_SCOPE, KRON_EVENT, kron::thread_name; mk.h's C
// macros) against a real board: the board's name table (docs/board-format.md "Name table"), the samples'
// name ids (kron/core/record.hpp named_data), and every count when the table is full or scribbled on.
#include <sys/syscall.h>

#include <cstring>
#include <string>

#include "kron/core/vocabulary.hpp"
#include "kron/format/trace_file.hpp"
#include "recorder/recorder.hpp"
#include "recorder_test_util.hpp"

extern "C" int kron_c_named_program(void);  // named_c_probe.c
extern "C" int kron_c_named_line(void);

namespace kron {
namespace {
using testing::in_child;
using testing::samples_of;
using testing::ScratchBoard;

board::CreateOptions small(std::uint32_t name_slots = board::kDefaultNameSlots) {
  board::CreateOptions o;
  o.size = 64 << 10;
  o.lanes = 4;
  o.name_slots = name_slots;
  return o;
}

std::string str(const char* p, std::size_t n) { return std::string(p, strnlen(p, n)); }

const record::NameRecord* find(const std::vector<record::NameRecord>& v, record::NameKind k, const std::string& name) {
  for (const auto& r : v)
    if (r.name_kind == k && str(r.name, sizeof r.name) == name) return &r;
  return nullptr;
}

constexpr int kScopeLine = __LINE__ + 6;  // the KRON_SCOPE_V line in the loop below

TEST(NamedProbeTest, ScopeAndEventRegisterOnceAndCarryTheirIdAndValue) {
  ScratchBoard b(small());
  ASSERT_EQ(in_child(b.name, [] {
              for (std::uint64_t i = 0; i < 3; ++i) {
                KRON_SCOPE_V("compress", i + 10);
                KRON_EVENT("bytes out", 100 + i);
              }
              return 0;
            }),
            0);
  auto r = b.reader();
  std::uint64_t lost = 9, bad = 9;
  const auto names = r.names(&lost, &bad);
  EXPECT_EQ(lost, 0u);
  EXPECT_EQ(bad, 0u);
  const auto* scope = find(names, record::NameKind::Scope, "compress");
  const auto* event = find(names, record::NameKind::Event, "bytes out");
  ASSERT_TRUE(scope && event);
  // Registered once each, whatever the number of times the probes ran: 2 sites + the thread's name.
  EXPECT_EQ(names.size(), 3u);
  EXPECT_EQ(scope->line, static_cast<std::uint32_t>(kScopeLine));
  EXPECT_NE(str(scope->file, sizeof scope->file).find("named_probe_test.cpp"), std::string::npos);
  EXPECT_FALSE(str(scope->function, sizeof scope->function).empty());
  EXPECT_NE(scope->id, event->id);
  const auto s = samples_of(r);
  ASSERT_EQ(s.size(), 9u);  // begin, event, end, three times
  for (std::uint64_t i = 0; i < 3; ++i) {
    const Sample &b0 = s[3 * i], &ev = s[3 * i + 1], &e0 = s[3 * i + 2];
    EXPECT_EQ(b0.flags, kFlagNamed | kFlagScopeBegin);
    EXPECT_EQ(ev.flags, kFlagNamed);
    EXPECT_EQ(e0.flags, kFlagNamed | kFlagScopeEnd);
    EXPECT_EQ(record::name_id_of(b0.data), scope->id);
    EXPECT_EQ(record::name_id_of(e0.data), scope->id);
    EXPECT_EQ(record::name_id_of(ev.data), event->id);
    EXPECT_EQ(record::named_value_of(b0.data), static_cast<std::int64_t>(i + 10));
    EXPECT_EQ(record::named_value_of(e0.data), static_cast<std::int64_t>(i + 10));
    EXPECT_EQ(record::named_value_of(ev.data), static_cast<std::int64_t>(100 + i));
    EXPECT_EQ(b0.group, KRON_NAMED_GROUP);
  }
}

TEST(NamedProbeTest, ThreadNamesAreCapturedAtClaimAndByThreadName) {
  ScratchBoard b(small());
  int tid = 0;
  int fd[2];
  ASSERT_EQ(::pipe(fd), 0);
  ASSERT_EQ(in_child(b.name, [&] {
              pthread_setname_np(pthread_self(), "set-before");
              kron::trace(1, 1);  // the lane claim reads /proc/self/task/TID/comm
              kron::thread_name("explicit-name");
              const int t = static_cast<int>(::syscall(SYS_gettid));
              return ::write(fd[1], &t, sizeof t) == sizeof t ? 0 : 1;
            }),
            0);
  ASSERT_EQ(::read(fd[0], &tid, sizeof tid), static_cast<long>(sizeof tid));
  ::close(fd[0]);
  ::close(fd[1]);
  auto r = b.reader();
  const auto names = r.names();
  const auto* claimed = find(names, record::NameKind::Thread, "set-before");
  const auto* expl = find(names, record::NameKind::Thread, "explicit-name");
  ASSERT_TRUE(claimed && expl);
  EXPECT_EQ(claimed->thread, static_cast<std::uint32_t>(tid));
  EXPECT_EQ(expl->thread, static_cast<std::uint32_t>(tid));
  EXPECT_EQ(board::source_pid(expl->source), static_cast<std::uint32_t>(tid));  // the child's main thread
  // The table keeps the last name a thread took.
  tracefile::NameTable t;
  for (const auto& n : names) t.add(n);
  EXPECT_EQ(t.thread(expl->source, expl->thread), "explicit-name");
}

TEST(NamedProbeTest, FullTableCountsTheNamesItHadNoRoomFor) {
  ScratchBoard b(small(2));
  ASSERT_EQ(in_child(b.name, [] {
              { KRON_SCOPE("first"); }   // slot 1: the site; slot 2: the thread's name at the lane claim
              { KRON_SCOPE("second"); }  // no room: recorded with KRON_NAME_NONE
              return 0;
            }),
            0);
  auto r = b.reader();
  std::uint64_t lost = 0;
  const auto names = r.names(&lost);
  EXPECT_EQ(names.size(), 2u);
  EXPECT_EQ(lost, 1u);
  const auto s = samples_of(r);
  ASSERT_EQ(s.size(), 4u);  // nothing recorded was lost: only the name
  EXPECT_EQ(record::name_id_of(s[2].data), record::kNoNameId);
  EXPECT_EQ(record::name_id_of(s[3].data), record::kNoNameId);
}

TEST(NamedProbeTest, BoardWithoutNameTableRecordsUnnamed) {
  ScratchBoard b(small(0));
  ASSERT_EQ(in_child(b.name, [] {
              KRON_EVENT("x", 1);
              return 0;
            }),
            0);
  auto r = b.reader();
  EXPECT_TRUE(r.names().empty());
  const auto s = samples_of(r);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(record::name_id_of(s[0].data), record::kNoNameId);
}

TEST(NamedProbeTest, ScribbledNameSlotsAreLeftOutAndCounted) {  // docs/board-format.md "Trust model"
  ScratchBoard b(small(4));
  auto* h = b.map.header();
  record::NameRecord good{};
  good.h = {record::RecordKind::Names, sizeof(record::NameRecord), 0, 0, 0};
  good.name_kind = record::NameKind::Scope;
  good.id = 1;
  std::memcpy(good.name, "ok", 2);
  auto put = [&](std::uint32_t i, record::NameRecord r) {
    board::NameSlot* slot = b.map.name_slot(i);
    std::memcpy(slot->body, reinterpret_cast<const std::uint8_t*>(&r) + 8, sizeof slot->body);
    std::uint64_t w;
    std::memcpy(&w, &r, 8);
    slot->header.store(w);
  };
  put(0, good);
  record::NameRecord wrong_id = good;  // slot 1 must hold id 2
  put(1, wrong_id);
  record::NameRecord unterminated = good;
  unterminated.id = 3;
  std::memset(unterminated.name, 'A', sizeof unterminated.name);
  put(2, unterminated);
  record::NameRecord bad_kind = good;
  bad_kind.id = 4;
  bad_kind.name_kind = static_cast<record::NameKind>(9);
  put(3, bad_kind);
  h->names_used.store(1000);  // scribbled far past the table: bounded by the validated slot count
  auto r = b.reader();
  std::uint64_t lost = 0, bad = 0;
  const auto names = r.names(&lost, &bad);
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(str(names[0].name, sizeof names[0].name), "ok");
  EXPECT_EQ(bad, 3u);
  EXPECT_EQ(lost, 996u);
}

TEST(NamedProbeTest, CMacrosRecordNamedScopesAndEvents) {
  ScratchBoard b(small());
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv(board::kEnvBoard, b.name.c_str(), 1);
    std::exit(kron_c_named_program());
  }
  int status;
  ::waitpid(pid, &status, 0);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  auto r = b.reader();
  const auto names = r.names();
  const auto* outer = find(names, record::NameKind::Scope, "c outer");
  const auto* in = find(names, record::NameKind::Scope, "c auto");
  const auto* ev = find(names, record::NameKind::Event, "c event");
  ASSERT_TRUE(outer && in && ev);
  EXPECT_TRUE(find(names, record::NameKind::Thread, "c-main"));
  EXPECT_EQ(outer->line, static_cast<std::uint32_t>(kron_c_named_line()));
  EXPECT_EQ(str(outer->function, sizeof outer->function), "kron_c_named_program");
  EXPECT_EQ(str(in->function, sizeof in->function), "inner");
  const auto s = samples_of(r);
  ASSERT_EQ(s.size(), 5u);  // outer begin, inner begin, inner end (cleanup), event, outer end
  EXPECT_EQ(s[0].flags, kFlagNamed | kFlagScopeBegin);
  EXPECT_EQ(record::name_id_of(s[0].data), outer->id);
  EXPECT_EQ(record::named_value_of(s[0].data), 42);
  EXPECT_EQ(record::name_id_of(s[1].data), in->id);
  EXPECT_EQ(s[2].flags, kFlagNamed | kFlagScopeEnd);
  EXPECT_EQ(record::name_id_of(s[2].data), in->id);
  EXPECT_EQ(s[3].flags, kFlagNamed);
  EXPECT_EQ(record::named_value_of(s[3].data), 7);
  EXPECT_EQ(s[4].flags, kFlagNamed | kFlagScopeEnd);
  EXPECT_EQ(record::name_id_of(s[4].data), outer->id);
}

}  // namespace
}  // namespace kron
