! A Fortran program instrumented with `use kron` (fortran_test.sh builds it with the installed kron-fortran.pc
! alone): a thread name, two phases, nested named scopes, a named event, a Trace sample, a latency histogram
! and a virtual counter; signed values (DECISION D30): events "signed" carrying -5, 0, 2**47-1 and -2**47, an
! event "signed outside" carrying 2**47 and -2**47-1 (their low 48 bits: D31), a scope "signed scope" carrying -5.
! Usage: kron_fortran_prog [N]  (N iterations a phase; default 100)
program kron_fortran_prog
  use kron
  use iso_fortran_env, only: int64
  implicit none
  type(kron_hist) :: h
  integer :: i, p, n, stat
  integer(int64) :: t0
  character(len=32) :: arg
  real :: x

  n = 100
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  call kron_thread_name("fortran main")
  h = kron_histogram("f step")
  x = 0.0
  do p = 1, 2
    call kron_phase(p)
    call kron_scope_begin("f solve")
    do i = 1, n
      t0 = kron_now()
      call kron_scope_begin("f step", i)
      x = x + sin(real(i))
      call kron_vcount(7, 1)
      call kron_scope_end()
      call kron_latency_end(h, t0)
    end do
    call kron_event("f residual", int(abs(x) * 1000))
    call kron_trace(1, 42)
    call kron_scope_end()
  end do
  call kron_event("signed", -5)  ! a default integer
  call kron_event("signed", 0_int64)
  call kron_event("signed", 140737488355327_int64)
  call kron_event("signed", -140737488355328_int64)
  call kron_event("signed outside", 140737488355328_int64)
  call kron_event("signed outside", -140737488355329_int64)
  call kron_scope_begin("signed scope", -5)
  call kron_scope_end()
  call kron_scope_end(stat)  ! nothing open: stat -1
  if (stat /= -1 .or. kron_current_phase() /= 2) stop 3
  print '(a, l1)', 'attached ', kron_attached()
end program kron_fortran_prog
