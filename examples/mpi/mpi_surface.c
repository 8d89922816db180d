/* The MPI a real code uses, once each, deterministically: an ordinary MPI program (no kron in it) that
 * libkron_mpi's tests record and check call by call (tests/mpi/mpi_surface_test.cpp). At least 2 ranks;
 * every point-to-point message goes from rank r to rank r+1 (mod size) with r+1 ints (bytes tell the
 * sender), under a tag of its own:
 *   11 MPI_Bsend            12 MPI_Rsend           13 MPI_Ibsend          14 MPI_Issend
 *   15 MPI_Irsend           16 MPI_Sendrecv_replace (2 ints each way)
 *   17 received after MPI_Probe, 18 after MPI_Iprobe, 19 by MPI_Mprobe + MPI_Mrecv, 20 by MPI_Improbe +
 *   MPI_Imrecv
 *   25 MPI_Isend whose request is freed (MPI_Request_free) while active, received by MPI_Recv
 *   26 MPI_Isend after a barrier (its request may have the freed one's handle), received by MPI_Recv
 *   21 MPI_Send_init / MPI_Recv_init, started 3 times (MPI_Startall, MPI_Waitall)
 *   22 MPI_Ssend_init / MPI_Recv_init, started 3 times (MPI_Start, MPI_Testall)
 *   23 MPI_Bsend_init, started 2 times, received by MPI_Recv
 *   24 MPI_Rsend_init, started 2 times, received by MPI_Irecv
 *   30 on a split communicator (ranks of one parity, in reverse world order): to the next member
 * then the `v` collectives, MPI_Reduce_scatter(_block), MPI_Scan, MPI_Exscan and the non-blocking
 * collectives on MPI_COMM_WORLD, completed by every kind of MPI_Wait and MPI_Test, and an MPI_Ibcast and
 * an MPI_Bcast on the split communicator. It checks its own results and exits 1 on a wrong one.
 *
 *   mpirun -np 4 -x LD_PRELOAD=libkron_mpi.so -x KRON_MPI_OUT=surface mpi_surface
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, right, left, failed;
/* Statuses, never read (MPI_STATUSES_IGNORE would do; GCC 12 takes MPICH's for an array of size 0). */
static MPI_Status statuses[12];

static void expect(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "mpi_surface: rank %d: %s\n", rank, what);
    failed = 1;
  }
}

/* The message of rank `from`: from+1 ints, each from * 100 + i. */
static void fill(int* buf, int from) {
  for (int i = 0; i <= from; ++i) buf[i] = from * 100 + i;
}
static int is_from(const int* buf, int from) {
  for (int i = 0; i <= from; ++i)
    if (buf[i] != from * 100 + i) return 0;
  return 1;
}

static void point_to_point(int* out, int* in) {
  MPI_Request r[4];
  MPI_Status st;
  int n = 0;
  fill(out, rank);
  MPI_Bsend(out, rank + 1, MPI_INT, right, 11, MPI_COMM_WORLD);
  MPI_Recv(in, left + 1, MPI_INT, left, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  expect(is_from(in, left), "MPI_Bsend");
  /* A ready send needs its receive posted: the barrier says it is. */
  MPI_Irecv(in, left + 1, MPI_INT, left, 12, MPI_COMM_WORLD, &r[0]);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Rsend(out, rank + 1, MPI_INT, right, 12, MPI_COMM_WORLD);
  MPI_Wait(&r[0], MPI_STATUS_IGNORE);
  expect(is_from(in, left), "MPI_Rsend");
  {
    int a[64], b[64], c[64];
    int done = 0, idx = 0, flag = 0, outcount = 0, indices[4];
    MPI_Irecv(a, left + 1, MPI_INT, left, 13, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(b, left + 1, MPI_INT, left, 14, MPI_COMM_WORLD, &r[1]);
    MPI_Irecv(c, left + 1, MPI_INT, left, 15, MPI_COMM_WORLD, &r[2]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Request s[3];
    MPI_Ibsend(out, rank + 1, MPI_INT, right, 13, MPI_COMM_WORLD, &s[0]);
    MPI_Issend(out, rank + 1, MPI_INT, right, 14, MPI_COMM_WORLD, &s[1]);
    MPI_Irsend(out, rank + 1, MPI_INT, right, 15, MPI_COMM_WORLD, &s[2]);
    /* The receives by MPI_Waitany and MPI_Testany, the sends by MPI_Waitsome and MPI_Testsome. */
    MPI_Waitany(3, r, &idx, MPI_STATUS_IGNORE);
    for (done = 1; done < 3;) {
      MPI_Testany(3, r, &idx, &flag, MPI_STATUS_IGNORE);
      if (flag && idx != MPI_UNDEFINED) ++done;
    }
    MPI_Waitsome(3, s, &outcount, indices, statuses);
    for (done = outcount; done < 3;) {
      MPI_Testsome(3, s, &outcount, indices, statuses);
      if (outcount != MPI_UNDEFINED) done += outcount;
    }
    expect(is_from(a, left) && is_from(b, left) && is_from(c, left), "MPI_Ibsend, MPI_Issend, MPI_Irsend");
  }
  {
    int pair[2] = {rank, -rank};
    MPI_Sendrecv_replace(pair, 2, MPI_INT, right, 16, left, 16, MPI_COMM_WORLD, &st);
    expect(pair[0] == left && pair[1] == -left && st.MPI_SOURCE == left, "MPI_Sendrecv_replace");
  }
  /* Probes: the size and source are learnt from the probe, then received. */
  MPI_Send(out, rank + 1, MPI_INT, right, 17, MPI_COMM_WORLD);
  MPI_Probe(MPI_ANY_SOURCE, 17, MPI_COMM_WORLD, &st);
  MPI_Get_count(&st, MPI_INT, &n);
  expect(st.MPI_SOURCE == left && n == left + 1, "MPI_Probe");
  MPI_Recv(in, n, MPI_INT, st.MPI_SOURCE, 17, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Isend(out, rank + 1, MPI_INT, right, 18, MPI_COMM_WORLD, &r[0]);
  for (int flag = 0; !flag;) MPI_Iprobe(MPI_ANY_SOURCE, 18, MPI_COMM_WORLD, &flag, &st);
  MPI_Recv(in, left + 1, MPI_INT, st.MPI_SOURCE, 18, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Wait(&r[0], MPI_STATUS_IGNORE);
  expect(is_from(in, left), "MPI_Iprobe");
  {
    MPI_Message msg;
    MPI_Send(out, rank + 1, MPI_INT, right, 19, MPI_COMM_WORLD);
    MPI_Mprobe(MPI_ANY_SOURCE, 19, MPI_COMM_WORLD, &msg, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    MPI_Mrecv(in, n, MPI_INT, &msg, &st);
    expect(is_from(in, left) && st.MPI_SOURCE == left, "MPI_Mrecv");
    MPI_Isend(out, rank + 1, MPI_INT, right, 20, MPI_COMM_WORLD, &r[0]);
    for (int flag = 0; !flag;) MPI_Improbe(MPI_ANY_SOURCE, 20, MPI_COMM_WORLD, &flag, &msg, &st);
    MPI_Imrecv(in, left + 1, MPI_INT, &msg, &r[1]);
    MPI_Waitall(2, r, statuses);
    expect(is_from(in, left), "MPI_Imrecv");
  }
  /* A send whose request is freed while active (MPI allows it: the send still completes, unseen). */
  MPI_Isend(out, rank + 1, MPI_INT, right, 25, MPI_COMM_WORLD, &r[0]);
  MPI_Request_free(&r[0]);
  MPI_Recv(in, left + 1, MPI_INT, left, 25, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  expect(is_from(in, left), "MPI_Request_free of an active MPI_Isend");
  /* The next request may be given the freed one's handle: it is completed as its own. */
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Isend(out, rank + 1, MPI_INT, right, 26, MPI_COMM_WORLD, &r[0]);
  MPI_Recv(in, left + 1, MPI_INT, left, 26, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Wait(&r[0], MPI_STATUS_IGNORE);
}

/* Persistent requests: each started several times, the handles freed at the end. */
static void persistent(int* out, int* in) {
  MPI_Request p[2], q[2], b, rr, rq;
  int all = 0;
  MPI_Recv_init(in, left + 1, MPI_INT, left, 21, MPI_COMM_WORLD, &p[0]);
  MPI_Send_init(out, rank + 1, MPI_INT, right, 21, MPI_COMM_WORLD, &p[1]);
  for (int k = 0; k < 3; ++k) {
    memset(in, 0, 64 * sizeof(int));
    MPI_Startall(2, p);
    MPI_Waitall(2, p, statuses);
    expect(is_from(in, left), "MPI_Send_init");
  }
  MPI_Recv_init(in, left + 1, MPI_INT, left, 22, MPI_COMM_WORLD, &q[0]);
  MPI_Ssend_init(out, rank + 1, MPI_INT, right, 22, MPI_COMM_WORLD, &q[1]);
  for (int k = 0; k < 3; ++k) {
    MPI_Start(&q[0]);
    MPI_Start(&q[1]);
    for (all = 0; !all;) MPI_Testall(2, q, &all, statuses);
    expect(is_from(in, left), "MPI_Ssend_init");
  }
  MPI_Bsend_init(out, rank + 1, MPI_INT, right, 23, MPI_COMM_WORLD, &b);
  for (int k = 0; k < 2; ++k) {
    MPI_Start(&b);
    MPI_Recv(in, left + 1, MPI_INT, left, 23, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&b, MPI_STATUS_IGNORE);
    expect(is_from(in, left), "MPI_Bsend_init");
  }
  MPI_Rsend_init(out, rank + 1, MPI_INT, right, 24, MPI_COMM_WORLD, &rr);
  for (int k = 0; k < 2; ++k) {
    MPI_Irecv(in, left + 1, MPI_INT, left, 24, MPI_COMM_WORLD, &rq);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Start(&rr);
    MPI_Wait(&rr, MPI_STATUS_IGNORE);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    expect(is_from(in, left), "MPI_Rsend_init");
  }
  MPI_Request_free(&p[0]);
  MPI_Request_free(&p[1]);
  MPI_Request_free(&q[0]);
  MPI_Request_free(&q[1]);
  MPI_Request_free(&b);
  MPI_Request_free(&rr);
}

/* A split communicator: ranks of one parity, ordered by descending world rank, so that a member's rank in
 * it differs from its world rank. */
static void split(int* out, int* in) {
  MPI_Comm half;
  int hr = 0, hn = 0, root_value = 0, value = 0;
  MPI_Request r;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
  MPI_Comm_rank(half, &hr);
  MPI_Comm_size(half, &hn);
  if (hn > 1) {
    const int to = (hr + 1) % hn, from = (hr + hn - 1) % hn;
    MPI_Status st;
    MPI_Sendrecv(out, rank + 1, MPI_INT, to, 30, in, 64, MPI_INT, from, 30, half, &st);
    expect(in[0] % 100 == 0 && st.MPI_SOURCE == from, "the split communicator's message");
  }
  /* Its member 0 (the highest world rank of its parity) broadcasts its world rank, blocking and not. */
  value = hr == 0 ? rank : -1;
  MPI_Bcast(&value, 1, MPI_INT, 0, half);
  root_value = hr == 0 ? rank : -1;
  MPI_Ibcast(&root_value, 1, MPI_INT, 0, half, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  expect(value == root_value && value % 2 == rank % 2 && value >= rank, "the split communicator's broadcasts");
  MPI_Comm_free(&half);
}

static void collectives(void) {
  int* counts = malloc(sizeof(int) * (size_t)size);
  int* displs = malloc(sizeof(int) * (size_t)size);
  int total = 0;
  for (int j = 0; j < size; ++j) {
    counts[j] = j + 1;
    displs[j] = total;
    total += j + 1;
  }
  int* big = calloc((size_t)total * (size_t)size, sizeof(int));
  int* big2 = calloc((size_t)total * (size_t)size, sizeof(int));
  int mine[64], got[64], x = rank + 1, y = 0;
  fill(mine, rank);
  /* Blocking `v` collectives and the rest: rank r gives r+1 ints (Alltoallv: j+1 ints to rank j). */
  MPI_Gatherv(mine, rank + 1, MPI_INT, big, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0)
    for (int j = 0; j < size; ++j) expect(is_from(big + displs[j], j), "MPI_Gatherv");
  if (rank == 0)
    for (int j = 0; j < size; ++j) fill(big + displs[j], j);
  MPI_Scatterv(big, counts, displs, MPI_INT, got, rank + 1, MPI_INT, 0, MPI_COMM_WORLD);
  expect(is_from(got, rank), "MPI_Scatterv");
  MPI_Allgatherv(mine, rank + 1, MPI_INT, big, counts, displs, MPI_INT, MPI_COMM_WORLD);
  for (int j = 0; j < size; ++j) expect(is_from(big + displs[j], j), "MPI_Allgatherv");
  {
    int* rcounts = malloc(sizeof(int) * (size_t)size);
    int* rdispls = malloc(sizeof(int) * (size_t)size);
    for (int j = 0; j < size; ++j) {
      rcounts[j] = rank + 1;
      rdispls[j] = j * (rank + 1);
    }
    for (int i = 0; i < total; ++i) big[i] = rank;
    MPI_Alltoallv(big, counts, displs, MPI_INT, big2, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD);
    for (int j = 0; j < size; ++j) expect(big2[j * (rank + 1)] == j, "MPI_Alltoallv");
    MPI_Request r;
    MPI_Ialltoallv(big, counts, displs, MPI_INT, big2, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int j = 0; j < size; ++j) expect(big2[j * (rank + 1)] == j, "MPI_Ialltoallv");
    free(rcounts);
    free(rdispls);
  }
  for (int i = 0; i < total; ++i) big[i] = 1;
  MPI_Reduce_scatter(big, got, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  expect(got[0] == size, "MPI_Reduce_scatter");
  MPI_Reduce_scatter_block(big, got, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  expect(got[1] == size, "MPI_Reduce_scatter_block");
  MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  expect(y == (rank + 1) * (rank + 2) / 2, "MPI_Scan");
  MPI_Exscan(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank > 0) expect(y == rank * (rank + 1) / 2, "MPI_Exscan");

  /* Non-blocking collectives: posted in one order on every rank, a blocking one among them, completed by
   * MPI_Waitall, MPI_Waitsome, MPI_Testsome, MPI_Testany, MPI_Waitany, MPI_Test and MPI_Wait. */
  {
    MPI_Request r[12];
    int bval = rank == 1 % size ? 42 : 0, sum = 0, all = 0, red = 0, sc = 0;
    int* g1 = calloc((size_t)size, sizeof(int));
    int* g2 = calloc((size_t)size, sizeof(int));
    int* a1 = calloc((size_t)size, sizeof(int));
    int* a2 = calloc((size_t)size, sizeof(int));
    int* s1 = calloc((size_t)size, sizeof(int));
    for (int j = 0; j < size; ++j) {
      s1[j] = j * 10;
      a1[j] = rank;
    }
    int done = 0, outcount = 0, indices[12], idx = 0, flag = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &r[0]);
    MPI_Ibcast(&bval, 1, MPI_INT, 1 % size, MPI_COMM_WORLD, &r[1]);
    MPI_Ireduce(&x, &red, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &r[2]);
    MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[3]);
    MPI_Allreduce(&x, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD); /* blocking, between them */
    MPI_Igather(&rank, 1, MPI_INT, g1, 1, MPI_INT, 0, MPI_COMM_WORLD, &r[4]);
    MPI_Iallgather(&rank, 1, MPI_INT, g2, 1, MPI_INT, MPI_COMM_WORLD, &r[5]);
    MPI_Iscatter(s1, 1, MPI_INT, &sc, 1, MPI_INT, 0, MPI_COMM_WORLD, &r[6]);
    MPI_Ialltoall(a1, 1, MPI_INT, a2, 1, MPI_INT, MPI_COMM_WORLD, &r[7]);
    MPI_Waitall(4, r, statuses);
    expect(bval == 42 && sum == size * (size + 1) / 2 && (rank != 0 || red == sum) && all == size,
           "MPI_Ibcast, MPI_Ireduce, MPI_Iallreduce");
    for (done = 0; done < 2;) {
      MPI_Waitsome(2, r + 4, &outcount, indices, statuses);
      if (outcount != MPI_UNDEFINED) done += outcount;
    }
    for (done = 0; done < 2;) {
      MPI_Testsome(2, r + 6, &outcount, indices, statuses);
      if (outcount != MPI_UNDEFINED) done += outcount;
    }
    for (int j = 0; j < size; ++j) expect(g2[j] == j && a2[j] == j && (rank != 0 || g1[j] == j), "MPI_Igather...");
    expect(sc == rank * 10, "MPI_Iscatter");
    /* The `v` ones: rank r gives r+1 ints. */
    MPI_Igatherv(mine, rank + 1, MPI_INT, big, counts, displs, MPI_INT, 0, MPI_COMM_WORLD, &r[8]);
    if (rank == 0)
      for (int j = 0; j < size; ++j) fill(big2 + displs[j], j);
    MPI_Iscatterv(big2, counts, displs, MPI_INT, got, rank + 1, MPI_INT, 0, MPI_COMM_WORLD, &r[9]);
    for (done = 0; done < 2;) {
      MPI_Testany(2, r + 8, &idx, &flag, MPI_STATUS_IGNORE);
      if (flag && idx != MPI_UNDEFINED) ++done;
    }
    expect(is_from(got, rank), "MPI_Iscatterv");
    MPI_Iallgatherv(mine, rank + 1, MPI_INT, big, counts, displs, MPI_INT, MPI_COMM_WORLD, &r[10]);
    MPI_Waitany(1, r + 10, &idx, MPI_STATUS_IGNORE);
    for (int j = 0; j < size; ++j) expect(is_from(big + displs[j], j), "MPI_Iallgatherv");
    MPI_Ibarrier(MPI_COMM_WORLD, &r[11]);
    for (flag = 0; !flag;) MPI_Test(&r[11], &flag, MPI_STATUS_IGNORE);
    free(g1);
    free(g2);
    free(a1);
    free(a2);
    free(s1);
  }
  free(big);
  free(big2);
  free(counts);
  free(displs);
}

int main(int argc, char** argv) {
  static int out[64], in[64];
  static char bsend_buffer[1 << 16];
  void* detached = NULL;
  int detached_size = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2 || size > 63) {
    if (rank == 0) fprintf(stderr, "mpi_surface: run it with 2 to 63 ranks\n");
    MPI_Finalize();
    return 2;
  }
  right = (rank + 1) % size;
  left = (rank + size - 1) % size;
  MPI_Buffer_attach(bsend_buffer, sizeof bsend_buffer);
  point_to_point(out, in);
  persistent(out, in);
  split(out, in);
  collectives();
  MPI_Buffer_detach(&detached, &detached_size);
  MPI_Finalize();
  return failed;
}
