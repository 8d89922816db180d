! The Fortran module kron: kron's probes for Fortran programs, ISO_C_BINDING over the C probes (kron/mk.h) and
! the few helpers of kron_fortran.c. Build with `gfortran prog.f90 $(pkg-config --cflags --libs kron-fortran)`
! (docs/languages.md). Without a board (the program not run under kron record / kron run) every probe returns
! at once.
!
!   use kron
!   call kron_thread_name("solver")
!   call kron_phase(1)
!   call kron_scope_begin("assemble")       ! a named scope (kron_scope_begin(name, value): with a value)
!   ...
!   call kron_scope_end()                   ! ends the innermost scope this thread opened
!   call kron_event("residual", n)
!   call kron_trace(1, 42)                  ! a Trace sample: filter level 1, data 42
!   h = kron_histogram("halo exchange")     ! type(kron_hist), by name
!   t0 = kron_now(); ...; call kron_latency_end(h, t0)   ! or kron_record_latency(h, ticks)
!   call kron_vcount(7, 1)                  ! virtual counter 0-8191
!
! Integer arguments take default integers or integer(int64) (generic interfaces).
! A named scope's or event's value is signed: the tools show call kron_event("n", -5) as -5. It is kept
! as a 48-bit integer, -2**47 .. 2**47-1; outside that range its low 48 bits are kept (docs/decisions.md,
! DECISION D30, D31).
module kron
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_size_t, c_char, c_ptr, c_null_ptr, c_associated
  use, intrinsic :: iso_fortran_env, only: int32, int64
  implicit none
  private

  type, public :: kron_hist
    type(c_ptr) :: p = c_null_ptr
  end type kron_hist

  public :: kron_trace, kron_resource, kron_count, kron_scope_begin, kron_scope_end, kron_event
  public :: kron_thread_name, kron_phase, kron_current_phase, kron_histogram, kron_record_latency
  public :: kron_now, kron_latency_end, kron_vcount, kron_attached, kron_scopes_dropped

  interface kron_trace
    module procedure trace4, trace8
  end interface kron_trace
  interface kron_resource
    module procedure resource4, resource8
  end interface kron_resource
  interface kron_scope_begin
    module procedure scope_begin, scope_begin4, scope_begin8
  end interface kron_scope_begin
  interface kron_event
    module procedure event4, event8
  end interface kron_event
  interface kron_record_latency
    module procedure record_latency4, record_latency8
  end interface kron_record_latency
  interface kron_vcount
    module procedure vcount4, vcount8
  end interface kron_vcount

  interface  ! kron/mk.h and kron_fortran.h (unsigned C arguments are passed as c_int)
    subroutine mk_trace_fn(group, data) bind(C, name="mk_trace_fn")
      import :: c_int, c_int64_t
      integer(c_int), value :: group
      integer(c_int64_t), value :: data
    end subroutine mk_trace_fn
    subroutine mk_resource_fn(group, data) bind(C, name="mk_resource_fn")
      import :: c_int, c_int64_t
      integer(c_int), value :: group
      integer(c_int64_t), value :: data
    end subroutine mk_resource_fn
    subroutine mk_count_fn(counter, n) bind(C, name="mk_count_fn")
      import :: c_int, c_int64_t
      integer(c_int), value :: counter
      integer(c_int64_t), value :: n
    end subroutine mk_count_fn
    integer(c_int) function mk_attached() bind(C, name="mk_attached")
      import :: c_int
    end function mk_attached
    subroutine kron_f_scope_begin(name, len, value) bind(C, name="kron_f_scope_begin")
      import :: c_char, c_size_t, c_int64_t
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_size_t), value :: len
      integer(c_int64_t), value :: value
    end subroutine kron_f_scope_begin
    integer(c_int) function kron_f_scope_end() bind(C, name="kron_f_scope_end")
      import :: c_int
    end function kron_f_scope_end
    subroutine kron_f_event(name, len, value) bind(C, name="kron_f_event")
      import :: c_char, c_size_t, c_int64_t
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_size_t), value :: len
      integer(c_int64_t), value :: value
    end subroutine kron_f_event
    type(c_ptr) function kron_f_histogram(name, len) bind(C, name="kron_f_histogram")
      import :: c_char, c_size_t, c_ptr
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_size_t), value :: len
    end function kron_f_histogram
    subroutine kron_f_thread_name(name, len) bind(C, name="kron_f_thread_name")
      import :: c_char, c_size_t
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_size_t), value :: len
    end subroutine kron_f_thread_name
    subroutine kron_f_record_latency(h, ticks) bind(C, name="kron_f_record_latency")
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: h
      integer(c_int64_t), value :: ticks
    end subroutine kron_f_record_latency
    subroutine kron_f_vcount(index, n) bind(C, name="kron_f_vcount")
      import :: c_int, c_int64_t
      integer(c_int), value :: index
      integer(c_int64_t), value :: n
    end subroutine kron_f_vcount
    subroutine kron_f_phase(id) bind(C, name="kron_f_phase")
      import :: c_int
      integer(c_int), value :: id
    end subroutine kron_f_phase
    integer(c_int) function kron_f_current_phase() bind(C, name="kron_f_current_phase")
      import :: c_int
    end function kron_f_current_phase
    integer(c_int64_t) function kron_f_now() bind(C, name="kron_f_now")
      import :: c_int64_t
    end function kron_f_now
    integer(c_int64_t) function kron_f_scopes_dropped() bind(C, name="kron_f_scopes_dropped")
      import :: c_int64_t
    end function kron_f_scopes_dropped
  end interface

contains

  subroutine trace4(group, data)
    integer, intent(in) :: group
    integer(int32), intent(in) :: data
    call mk_trace_fn(int(group, c_int), int(data, c_int64_t))
  end subroutine trace4
  subroutine trace8(group, data)
    integer, intent(in) :: group
    integer(int64), intent(in) :: data
    call mk_trace_fn(int(group, c_int), data)
  end subroutine trace8
  subroutine resource4(group, data)
    integer, intent(in) :: group
    integer(int32), intent(in) :: data
    call mk_resource_fn(int(group, c_int), int(data, c_int64_t))
  end subroutine resource4
  subroutine resource8(group, data)
    integer, intent(in) :: group
    integer(int64), intent(in) :: data
    call mk_resource_fn(int(group, c_int), data)
  end subroutine resource8
  ! Software increment of resource counter `counter` (0-15) by n.
  subroutine kron_count(counter, n)
    integer, intent(in) :: counter, n
    call mk_count_fn(int(counter, c_int), int(n, c_int64_t))
  end subroutine kron_count
  logical function kron_attached()
    kron_attached = mk_attached() /= 0
  end function kron_attached

  ! A named scope begins (its name's trailing blanks are not part of it); kron_scope_end() ends it. The
  ! site is one per name (ERRATUM E381), nesting at most 256 deep on a thread.
  subroutine scope_begin(name)
    character(len=*), intent(in) :: name
    call kron_f_scope_begin(name, int(len_trim(name), c_size_t), 0_c_int64_t)
  end subroutine scope_begin
  subroutine scope_begin4(name, value)
    character(len=*), intent(in) :: name
    integer(int32), intent(in) :: value
    call kron_f_scope_begin(name, int(len_trim(name), c_size_t), int(value, c_int64_t))
  end subroutine scope_begin4
  subroutine scope_begin8(name, value)
    character(len=*), intent(in) :: name
    integer(int64), intent(in) :: value
    call kron_f_scope_begin(name, int(len_trim(name), c_size_t), value)
  end subroutine scope_begin8
  ! Ends the innermost scope this thread began; stat (optional): 0, or -1 when none was open.
  subroutine kron_scope_end(stat)
    integer, intent(out), optional :: stat
    integer :: s
    s = int(kron_f_scope_end())
    if (present(stat)) stat = s
  end subroutine kron_scope_end
  ! Scopes not recorded because a thread had 256 open already (ERRATUM E381): begin and end both left out.
  integer(int64) function kron_scopes_dropped()
    kron_scopes_dropped = kron_f_scopes_dropped()
  end function kron_scopes_dropped
  subroutine event4(name, value)
    character(len=*), intent(in) :: name
    integer(int32), intent(in) :: value
    call kron_f_event(name, int(len_trim(name), c_size_t), int(value, c_int64_t))
  end subroutine event4
  subroutine event8(name, value)
    character(len=*), intent(in) :: name
    integer(int64), intent(in) :: value
    call kron_f_event(name, int(len_trim(name), c_size_t), value)
  end subroutine event8

  subroutine kron_thread_name(name)
    character(len=*), intent(in) :: name
    call kron_f_thread_name(name, int(len_trim(name), c_size_t))
  end subroutine kron_thread_name
  ! This thread's phase (0-65535): its samples, histograms and virtual counters are kept per phase.
  subroutine kron_phase(id)
    integer, intent(in) :: id
    call kron_f_phase(int(id, c_int))
  end subroutine kron_phase
  integer function kron_current_phase()
    kron_current_phase = int(kron_f_current_phase())
  end function kron_current_phase

  ! A latency histogram by name (at most 39 characters kept): the same name gives the same histogram.
  type(kron_hist) function kron_histogram(name)
    character(len=*), intent(in) :: name
    kron_histogram%p = kron_f_histogram(name, int(len_trim(name), c_size_t))
  end function kron_histogram
  subroutine record_latency4(h, ticks)
    type(kron_hist), intent(in) :: h
    integer(int32), intent(in) :: ticks
    if (c_associated(h%p)) call kron_f_record_latency(h%p, int(ticks, c_int64_t))
  end subroutine record_latency4
  subroutine record_latency8(h, ticks)
    type(kron_hist), intent(in) :: h
    integer(int64), intent(in) :: ticks
    if (c_associated(h%p)) call kron_f_record_latency(h%p, ticks)
  end subroutine record_latency8
  ! The probes' clock (timestamp ticks): t0 = kron_now(), then kron_latency_end(h, t0).
  integer(int64) function kron_now()
    kron_now = kron_f_now()
  end function kron_now
  subroutine kron_latency_end(h, t0)
    type(kron_hist), intent(in) :: h
    integer(int64), intent(in) :: t0
    if (c_associated(h%p)) call kron_f_record_latency(h%p, kron_f_now() - t0)
  end subroutine kron_latency_end
  subroutine vcount4(index, n)
    integer, intent(in) :: index
    integer(int32), intent(in) :: n
    call kron_f_vcount(int(index, c_int), int(n, c_int64_t))
  end subroutine vcount4
  subroutine vcount8(index, n)
    integer, intent(in) :: index
    integer(int64), intent(in) :: n
    call kron_f_vcount(int(index, c_int), n)
  end subroutine vcount8
end module kron
