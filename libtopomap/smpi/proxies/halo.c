/* halo: periodic halo exchange on a Cartesian grid (libtopomap SMPI proxy).
 *
 * usage: halo [NDIMS [BYTES [ITERS [ALLREDUCE]]]]   (defaults 2 65536 10 1)
 * The grid is MPI_Dims_create(size, NDIMS) (NDIMS 1, 2 or 3), periodic in every dimension, in
 * rank order (MPI_Cart_create without reorder).  Each iteration every rank sends BYTES to each of its
 * 2*NDIMS neighbours (Irecv/Isend/Waitall), then, unless ALLREDUCE is 0, one MPI_Allreduce of one
 * double.  Rank 0 prints one line:
 *   LTM_RESULT proxy=halo ranks=P ndims=D dims=AxB bytes=N iters=I allreduce=1 time=SECONDS
 * where time is the largest MPI_Wtime span of the timed loop over the ranks (simulated under SMPI).
 */
#include "proxy.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long arg(int argc, char **argv, int i, long dflt, long lo, const char *what)
{
    if (argc <= i)
        return dflt;
    char *end;
    long v = strtol(argv[i], &end, 10);
    if (*end || v < lo) {
        fprintf(stderr, "halo: bad %s '%s' (an integer >= %ld)\n", what, argv[i], lo);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return v;
}

int main(int argc, char **argv)
{
    int rank, size;
    ltm_init(&argc, &argv, &rank, &size);
    int ndims = (int)arg(argc, argv, 1, 2, 1, "NDIMS");
    long bytes = arg(argc, argv, 2, 65536, 0, "BYTES");
    long iters = arg(argc, argv, 3, 10, 1, "ITERS");
    int allreduce = (int)arg(argc, argv, 4, 1, 0, "ALLREDUCE");
    if (ndims > 3) {
        if (rank == 0)
            fprintf(stderr, "halo: NDIMS must be 1, 2 or 3, got %d\n", ndims);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int dims[3] = {0, 0, 0}, periods[3] = {1, 1, 1};
    MPI_Dims_create(size, ndims, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &cart);
    int nb[6];
    for (int d = 0; d < ndims; d++)
        MPI_Cart_shift(cart, d, 1, &nb[2 * d], &nb[2 * d + 1]);
    int nn = 2 * ndims;
    char *sbuf = ltm_buffer((size_t)bytes);
    char *rbuf = ltm_buffer((size_t)bytes * nn);
    if (!sbuf || !rbuf) {
        fprintf(stderr, "halo: rank %d cannot allocate %ld bytes\n", rank, bytes * (nn + 1));
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Request req[12];
    double x = 1.0, sum;
    MPI_Barrier(cart);
    double t0 = MPI_Wtime();
    for (long it = 0; it < iters; it++) {
        for (int k = 0; k < nn; k++)
            MPI_Irecv(rbuf + (size_t)k * bytes, (int)bytes, MPI_BYTE, nb[k], k, cart, &req[k]);
        for (int k = 0; k < nn; k++)  /* the message to nb[k] is tag k^1: the receiver's opposite side */
            MPI_Isend(sbuf, (int)bytes, MPI_BYTE, nb[k], k ^ 1, cart, &req[nn + k]);
        MPI_Waitall(2 * nn, req, MPI_STATUSES_IGNORE);
        if (allreduce)
            MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, cart);
    }
    double t = MPI_Wtime() - t0, tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, cart);
    if (rank == 0) {
        char ds[64];
        int n = 0;
        for (int d = 0; d < ndims; d++)
            n += snprintf(ds + n, sizeof ds - n, d ? "x%d" : "%d", dims[d]);
        printf("LTM_RESULT proxy=halo ranks=%d ndims=%d dims=%s bytes=%ld iters=%ld allreduce=%d time=%.9e\n",
               size, ndims, ds, bytes, iters, allreduce, tmax);
    }
    free(sbuf);
    free(rbuf);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
