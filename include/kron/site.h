/* A named probe's static site, shared by the C (mk.h) and C++ (kron.hpp) probes: the name and source
 * location of one KRON_SCOPE / KRON_EVENT, written once by the compiler into a static object, and the
 * small id the board's name table gave it (0 until the probe first runs with a board attached).
 *
 * The id is registered on the slow path (kron_site_register, src/probe/probe.cpp) the first time the
 * probe passes the filter; from then on the hot path loads it (one relaxed load) and stores it in the
 * sample's data word beside the value (kron/core/record.hpp named_data()). No third-party dependency. */
#ifndef KRON_SITE_H
#define KRON_SITE_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a site names (the name table's entries, kron/core/record.hpp NameKind). */
enum { KRON_SITE_SCOPE = 1, KRON_SITE_EVENT = 2 };
/* The function hooks (kron-functions.pc): the one site whose samples carry a function's address, and a loaded
 * object of the load map (`name`: its load bias as "0x..." text, `file`: its path). */
enum { KRON_SITE_FUNCTION = 3, KRON_SITE_MODULE = 4 };
/* An id no table entry has: the table was full (counted on the board) or no board is attached. */
#define KRON_NAME_NONE 0xffffu

struct kron_site {
  const char* name;     /* static string: the scope or event name */
  const char* file;     /* __FILE__ */
  const char* function; /* __func__ */
  uint32_t line;        /* __LINE__ */
  uint32_t kind;        /* KRON_SITE_SCOPE or KRON_SITE_EVENT */
  uint32_t id;          /* 0: not registered yet; 1-65534: the board's id; KRON_NAME_NONE: none to be had.
                            Accessed with __atomic builtins (relaxed). */
  uint32_t reserved;
};

/* Registers `site` in the attached board's name table (slow path; thread-safe) and returns its id. */
uint32_t kron_site_register(struct kron_site* site);

#ifdef __cplusplus
}
#endif
#endif
