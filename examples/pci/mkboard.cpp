// The C shim of mkboard.h over kron::pcib::PciBoard (the board model with its MultiKron II).
#include "mkboard.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "models/pcib/pcib.hpp"

struct mkb_board {
  kron::pcib::PciBoard board;
  bool realtime = true;
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();

  // Real time since the last access, as node clocks of the board's configured NODECLK.
  void catch_up() {
    const auto t = std::chrono::steady_clock::now();
    if (realtime) {
      const double s = std::chrono::duration<double>(t - last).count();
      board.tick(static_cast<std::uint64_t>(s * static_cast<double>(board.node_hz())));
    }
    last = t;
  }
};

extern "C" {

mkb_board* mkb_default = nullptr;

mkb_board* mkb_open(void) { return new mkb_board(); }
void mkb_close(mkb_board* b) { delete b; }

void mkb_init_default(mkb_board* b) {
  mkb_write(b, MKB_RESET, 0);
  mkb_write(b, MKB_CONFIG, MKB_DEFAULT_CONFIG);
  mkb_write(b, MKB_MK(0), 0);          // MultiKron II Software Reset
  mkb_write(b, MKB_MK(4), 0xffff);     // Filter Register: every level
  mkb_write(b, MKB_MK(1), 1u | 1u << 2);  // CSR: enable sampling, wait on overrun (000 Table B1)
}

void mkb_realtime(mkb_board* b, int on) {
  b->realtime = on != 0;
  b->last = std::chrono::steady_clock::now();
}

void mkb_write(mkb_board* b, uint32_t offset, uint64_t value) {
  b->catch_up();
  b->board.write(offset, value);
}

uint64_t mkb_read(mkb_board* b, uint32_t offset) {
  b->catch_up();
  return b->board.read(offset);
}

void mkb_tick(mkb_board* b, uint64_t node_clocks) { b->board.tick(node_clocks); }

void mkb_drain(mkb_board* b) {
  b->catch_up();
  b->board.drain();
}

long mkb_save_memory(mkb_board* b, const char* path) {
  mkb_drain(b);
  const auto words = static_cast<std::uint32_t>(b->board.peek(MKB_POINTER)) & kron::pcib::kMemoryWordMask;
  std::string error;
  b->board.command("memimage", {path}, error);
  if (!error.empty()) {
    std::fprintf(stderr, "mkb_save_memory: %s\n", error.c_str());
    return -1;
  }
  return static_cast<long>(words) * 4;
}

}  // extern "C"
