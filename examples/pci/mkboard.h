/* mkboard.h: a C view of kron's PCI toolkit board model (003, NISTIR 5993), shaped like the toolkit's
 * own mk.h so that programs written the way 003's src/sample/sample1.c is described run against the
 * model. On a real board MK_DEFAULT_MAP() maps the board into the program and a probe is an assignment
 * to a mapped address (003 section 3.6: `mk_ts1 = SEND_EVENT;`); against the model a store cannot reach
 * a simulator by itself, so each probe is a call (`MK_TS1(SEND_EVENT);`) that performs that same PCI write.
 * Names are prefixed mkb_ / MKB_ so as not to clash with kron's live-recorder header kron/mk.h. */
#ifndef KRON_EXAMPLES_PCI_MKBOARD_H
#define KRON_EXAMPLES_PCI_MKBOARD_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mkb_board mkb_board;

/* 003 Table 1: PCI byte offsets. */
#define MKB_CHIP 0x1000u          /* MultiKron II, 128 32-bit words */
#define MKB_RESET 0x1200u         /* board Software Reset */
#define MKB_CONFIG 0x1204u        /* Configuration Register (Table 2) */
#define MKB_POINTER 0x1208u       /* Memory Address Pointer (32-bit words) */
#define MKB_MEMORY 0x1000000u     /* Local Memory */
#define MKB_DEFAULT_CONFIG 0x003201u /* 003 "Default Configuration" */
/* MultiKron II words (000 Table B4). */
#define MKB_MK(word) (MKB_CHIP + 4u * (word))
#define MKB_TRACE(level) MKB_MK(96u + (level))     /* Trace sample at filter level 0-15 */
#define MKB_RESOURCE(level) MKB_MK(112u + (level)) /* Resource sample */

mkb_board* mkb_open(void);             /* a board model after PCI reset */
void mkb_close(mkb_board* b);
/* The toolkit's initialization routine: board reset, the default configuration, MultiKron reset,
 * sampling enabled for every filter level, the memory address pointer at 0. */
void mkb_init_default(mkb_board* b);
/* Whether model time follows the program's real elapsed time between accesses (1, the default after
 * mkb_open) or only advances by mkb_tick (0, reproducible). */
void mkb_realtime(mkb_board* b, int on);
void mkb_write(mkb_board* b, uint32_t offset, uint64_t value);
uint64_t mkb_read(mkb_board* b, uint32_t offset);
void mkb_tick(mkb_board* b, uint64_t node_clocks);
void mkb_drain(mkb_board* b);
/* Saves the board's local memory with its Memory Address Pointer and Configuration Register as a board
 * memory image (the model's `memimage`), for `kron rdsample --pci-memory FILE` (003's mk_rdsample).
 * Returns the bytes of samples the memory holds (4 x the words written), or -1 on error. */
long mkb_save_memory(mkb_board* b, const char* path);

/* The mapped board of MK_DEFAULT_MAP(), and the probe macros. */
extern mkb_board* mkb_default;
#define MK_DEFAULT_MAP() (mkb_default = mkb_open(), mkb_init_default(mkb_default))
#define MK_SOURCE(cpu, id) mkb_write(mkb_default, MKB_MK(32u + (cpu)), (id)) /* Source Address Register */
#define MK_TRACE(level, value) mkb_write(mkb_default, MKB_TRACE(level), (uint64_t)(value))
#define MK_RESOURCE(level, value) mkb_write(mkb_default, MKB_RESOURCE(level), (uint64_t)(value))
/* kron's reading of 003's `mk_ts1`: a Trace sample at filter level 1. */
#define MK_TS1(value) MK_TRACE(1u, (value))

#ifdef __cplusplus
}
#endif
#endif
