/* fft: the data movement of a pencil-decomposed 3-D FFT (libtopomap SMPI proxy).
 *
 * usage: fft [N [ITERS]]   (defaults 64 10)
 * N^3 complex doubles (16 bytes each) are spread over a P = R x C process grid (MPI_Dims_create(P, 2),
 * row-major ranks).  Each iteration does the two transposes of a forward pencil FFT: an MPI_Alltoall
 * in the row communicator (C ranks, MPI_Comm_split by row) and one in the column communicator (R
 * ranks), each moving every rank's whole pencil (N^3 / P elements) in equal blocks.  No arithmetic.
 * Rank 0 prints one line:
 *   LTM_RESULT proxy=fft ranks=P grid=RxC n=N iters=I row_block=B col_block=B time=SECONDS
 */
#include "proxy.h"
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size;
    ltm_init(&argc, &argv, &rank, &size);
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 64;
    long iters = argc > 2 ? strtol(argv[2], NULL, 10) : 10;
    if (n < 1 || iters < 1) {
        if (rank == 0)
            fprintf(stderr, "fft: N and ITERS must be >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int dims[2] = {0, 0};
    MPI_Dims_create(size, 2, dims);
    int row = rank / dims[1], col = rank % dims[1];
    MPI_Comm rowc, colc;
    MPI_Comm_split(MPI_COMM_WORLD, row, col, &rowc);
    MPI_Comm_split(MPI_COMM_WORLD, col, row, &colc);
    double local = (double)n * n * n / size; /* elements per rank */
    long rb = (long)(local / dims[1] * 16), cb = (long)(local / dims[0] * 16);
    if (rb < 1)
        rb = 1;
    if (cb < 1)
        cb = 1;
    long big = rb * dims[1] > cb * dims[0] ? rb * dims[1] : cb * dims[0];
    char *s = ltm_buffer((size_t)big), *r = ltm_buffer((size_t)big);
    if (!s || !r || rb > 0x7fffffff || cb > 0x7fffffff) {
        fprintf(stderr, "fft: rank %d cannot allocate %ld bytes\n", rank, 2 * big);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long it = 0; it < iters; it++) {
        MPI_Alltoall(s, (int)rb, MPI_BYTE, r, (int)rb, MPI_BYTE, rowc);
        MPI_Alltoall(s, (int)cb, MPI_BYTE, r, (int)cb, MPI_BYTE, colc);
    }
    double t = MPI_Wtime() - t0, tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("LTM_RESULT proxy=fft ranks=%d grid=%dx%d n=%ld iters=%ld row_block=%ld col_block=%ld time=%.9e\n",
               size, dims[0], dims[1], n, iters, rb, cb, tmax);
    free(s);
    free(r);
    MPI_Comm_free(&rowc);
    MPI_Comm_free(&colc);
    MPI_Finalize();
    return 0;
}
