// libkron_omp: an OMPT tool (OpenMP 5.x, docs/functions.md "OpenMP") that records an OpenMP program's constructs
// as named scopes, with no kron code in the program: LLVM's libomp loads it through OMP_TOOL_LIBRARIES
// (`kron record --openmp` sets that), calls ompt_start_tool, and then the callbacks below on every thread.
//
//   omp parallel                      the encountering thread, from the region's begin to its end
//   omp implicit task                 each thread's share of a parallel region
//   omp task                          an explicit task, each stretch it runs on a thread (begin when scheduled
//                                     in, end when it completes or is switched out); "omp task created" events
//   omp barrier (implicit|explicit)   a barrier, taskwait, taskgroup or reduction region, and inside it
//   omp barrier wait (...)            the time the thread waited (ompt_callback_sync_region_wait)
//   omp critical|lock|ordered|atomic wait / hold   a mutex: waiting for it, then holding it
//   omp loop, omp single (executor|other), omp sections, omp masked, ...   worksharing regions
//   omp loop chunk                    an event per chunk where the runtime reports them (dispatch), value: its
//                                     first iteration
// Each OpenMP worker thread is named "omp thread N" by its number in its first team (kron::thread_name).
// The tool carries its own copy of the probe (global-dynamic thread-locals: a dlopen()ed object) with its symbols
// hidden; it attaches to $KRON_BOARD and stays inactive without one (ompt_initialize returns 0).
#include KRON_OMP_TOOLS_H

#include <pthread.h>

#include <cstdio>

#include "kron/kron.hpp"
#include "kron/process_attach.hpp"

// ERRATUM E322: found by the program's copy of the probe when this library is in the global scope (LD_PRELOAD);
// libomp's dlopen of OMP_TOOL_LIBRARIES is not, and there the two copies count apart.
KRON_DEFINE_PROCESS_ATTACH();

namespace {

// ERRATUM E396: the sites name the library (their location reads "libkron_omp"), never kron's source path.
#define KRON_OMP_SITE(var, text) \
  kron_site var { text, "", "libkron_omp", 0, KRON_SITE_SCOPE, 0, 0 }
KRON_OMP_SITE(s_parallel, "omp parallel");
KRON_OMP_SITE(s_implicit, "omp implicit task");
KRON_OMP_SITE(s_task, "omp task");
kron_site s_task_created{"omp task created", "", "libkron_omp", 0, KRON_SITE_EVENT, 0, 0};
kron_site s_chunk{"omp loop chunk", "", "libkron_omp", 0, KRON_SITE_EVENT, 0, 0};
KRON_OMP_SITE(s_bar_implicit, "omp barrier (implicit)");
KRON_OMP_SITE(s_bar_explicit, "omp barrier (explicit)");
KRON_OMP_SITE(s_taskwait, "omp taskwait");
KRON_OMP_SITE(s_taskgroup, "omp taskgroup");
KRON_OMP_SITE(s_reduction, "omp reduction");
KRON_OMP_SITE(s_wait_implicit, "omp barrier wait (implicit)");
KRON_OMP_SITE(s_wait_explicit, "omp barrier wait (explicit)");
KRON_OMP_SITE(s_wait_taskwait, "omp taskwait wait");
KRON_OMP_SITE(s_wait_taskgroup, "omp taskgroup wait");
KRON_OMP_SITE(s_wait_reduction, "omp reduction wait");
KRON_OMP_SITE(s_critical_wait, "omp critical wait");
KRON_OMP_SITE(s_critical_hold, "omp critical hold");
KRON_OMP_SITE(s_lock_wait, "omp lock wait");
KRON_OMP_SITE(s_lock_hold, "omp lock hold");
KRON_OMP_SITE(s_ordered_wait, "omp ordered wait");
KRON_OMP_SITE(s_ordered_hold, "omp ordered hold");
KRON_OMP_SITE(s_atomic_wait, "omp atomic wait");
KRON_OMP_SITE(s_atomic_hold, "omp atomic hold");
KRON_OMP_SITE(s_loop, "omp loop");
KRON_OMP_SITE(s_sections, "omp sections");
KRON_OMP_SITE(s_single_exec, "omp single (executor)");
KRON_OMP_SITE(s_single_other, "omp single (other)");
KRON_OMP_SITE(s_workshare, "omp workshare");
KRON_OMP_SITE(s_distribute, "omp distribute");
KRON_OMP_SITE(s_taskloop, "omp taskloop");
KRON_OMP_SITE(s_masked, "omp masked");

constexpr std::uint64_t kExplicitTask = 1;  // task_data->value of an explicit task (set at its creation)
thread_local bool t_named = false;

void mark(kron_site& s, ompt_scope_endpoint_t e, std::uint64_t value = 0) {
  kron::named(s, KRON_NAMED_GROUP, value, e == ompt_scope_begin ? kron::Named::Begin : kron::Named::End);
}

void on_parallel_begin(ompt_data_t*, const ompt_frame_t*, ompt_data_t*, unsigned int requested, int, const void*) {
  kron::named(s_parallel, KRON_NAMED_GROUP, requested, kron::Named::Begin);
}
void on_parallel_end(ompt_data_t*, ompt_data_t*, int, const void*) {
  kron::named(s_parallel, KRON_NAMED_GROUP, 0, kron::Named::End);
}

void on_implicit_task(ompt_scope_endpoint_t e, ompt_data_t*, ompt_data_t*, unsigned int, unsigned int index,
                      int flags) {
  if (flags & ompt_task_initial) return;                  // the initial task spans the program
  if (e == ompt_scope_begin && !t_named && index != 0) {  // thread 0 is the program's own (its name kept)
    char name[32];                                        // kron::thread_name keeps 15 bytes, as the kernel does
    std::snprintf(name, sizeof name, "omp thread %u", index);
    kron::thread_name(name);
    t_named = true;
  }
  mark(s_implicit, e, index);
}

void on_task_create(ompt_data_t*, const ompt_frame_t*, ompt_data_t* task, int flags, int, const void*) {
  if (!(flags & ompt_task_explicit)) return;
  task->value = kExplicitTask;
  kron::named(s_task_created, KRON_NAMED_GROUP, 1, kron::Named::Event);
}
void on_task_schedule(ompt_data_t* prior, ompt_task_status_t, ompt_data_t* next) {
  if (prior && prior->value == kExplicitTask) kron::named(s_task, KRON_NAMED_GROUP, 0, kron::Named::End);
  if (next && next->value == kExplicitTask) kron::named(s_task, KRON_NAMED_GROUP, 0, kron::Named::Begin);
}

void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t e, ompt_data_t*, ompt_data_t*, const void*) {
  switch (kind) {
    case ompt_sync_region_barrier_explicit: return mark(s_bar_explicit, e);
    case ompt_sync_region_taskwait: return mark(s_taskwait, e);
    case ompt_sync_region_taskgroup: return mark(s_taskgroup, e);
    case ompt_sync_region_reduction: return mark(s_reduction, e);
    default: return mark(s_bar_implicit, e);  // implicit (parallel, workshare), implementation, teams
  }
}
void on_sync_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t e, ompt_data_t*, ompt_data_t*, const void*) {
  switch (kind) {
    case ompt_sync_region_barrier_explicit: return mark(s_wait_explicit, e);
    case ompt_sync_region_taskwait: return mark(s_wait_taskwait, e);
    case ompt_sync_region_taskgroup: return mark(s_wait_taskgroup, e);
    case ompt_sync_region_reduction: return mark(s_wait_reduction, e);
    default: return mark(s_wait_implicit, e);
  }
}

kron_site* wait_site(ompt_mutex_t kind) {
  switch (kind) {
    case ompt_mutex_critical: return &s_critical_wait;
    case ompt_mutex_ordered: return &s_ordered_wait;
    case ompt_mutex_atomic: return &s_atomic_wait;
    default: return &s_lock_wait;  // lock, test_lock, nest_lock, test_nest_lock
  }
}
kron_site* hold_site(ompt_mutex_t kind) {
  switch (kind) {
    case ompt_mutex_critical: return &s_critical_hold;
    case ompt_mutex_ordered: return &s_ordered_hold;
    case ompt_mutex_atomic: return &s_atomic_hold;
    default: return &s_lock_hold;
  }
}
void on_mutex_acquire(ompt_mutex_t kind, unsigned int, unsigned int, ompt_wait_id_t, const void*) {
  kron::named(*wait_site(kind), KRON_NAMED_GROUP, 0, kron::Named::Begin);
}
void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t, const void*) {
  kron::named(*wait_site(kind), KRON_NAMED_GROUP, 0, kron::Named::End);
  kron::named(*hold_site(kind), KRON_NAMED_GROUP, 0, kron::Named::Begin);
}
void on_mutex_released(ompt_mutex_t kind, ompt_wait_id_t, const void*) {
  kron::named(*hold_site(kind), KRON_NAMED_GROUP, 0, kron::Named::End);
}

void on_work(ompt_work_t ws, ompt_scope_endpoint_t e, ompt_data_t*, ompt_data_t*, std::uint64_t count, const void*) {
  switch (ws) {
    case ompt_work_loop: return mark(s_loop, e, count);
    case ompt_work_sections: return mark(s_sections, e, count);
    case ompt_work_single_executor: return mark(s_single_exec, e);
    case ompt_work_single_other: return mark(s_single_other, e);
    case ompt_work_workshare: return mark(s_workshare, e);
    case ompt_work_distribute: return mark(s_distribute, e, count);
    case ompt_work_taskloop: return mark(s_taskloop, e, count);
    default: return;
  }
}
void on_masked(ompt_scope_endpoint_t e, ompt_data_t*, ompt_data_t*, const void*) { mark(s_masked, e); }
void on_dispatch(ompt_data_t*, ompt_data_t*, ompt_dispatch_t, ompt_data_t instance) {
  kron::named(s_chunk, KRON_NAMED_GROUP, instance.value, kron::Named::Event);
}

int initialize(ompt_function_lookup_t lookup, int, ompt_data_t*) {
  if (!kron::attached()) return 0;  // no board: the tool stays out of the program's way
  auto set = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (!set) return 0;
  auto cb = [&](ompt_callbacks_t which, auto fn) { set(which, reinterpret_cast<ompt_callback_t>(fn)); };
  cb(ompt_callback_parallel_begin, &on_parallel_begin);
  cb(ompt_callback_parallel_end, &on_parallel_end);
  cb(ompt_callback_implicit_task, &on_implicit_task);
  cb(ompt_callback_task_create, &on_task_create);
  cb(ompt_callback_task_schedule, &on_task_schedule);
  cb(ompt_callback_sync_region, &on_sync_region);
  cb(ompt_callback_sync_region_wait, &on_sync_wait);
  cb(ompt_callback_mutex_acquire, &on_mutex_acquire);
  cb(ompt_callback_mutex_acquired, &on_mutex_acquired);
  cb(ompt_callback_mutex_released, &on_mutex_released);
  cb(ompt_callback_work, &on_work);
  cb(ompt_callback_masked, &on_masked);
  cb(ompt_callback_dispatch, &on_dispatch);
  return 1;
}
void finalize(ompt_data_t*) {}

ompt_start_tool_result_t g_result{&initialize, &finalize, {0}};

}  // namespace

extern "C" __attribute__((visibility("default"))) ompt_start_tool_result_t* ompt_start_tool(unsigned int, const char*) {
  kron::attach(nullptr);  // the probe's start-up attach may not have run before the runtime asks
  return kron::attached() ? &g_result : nullptr;
}
