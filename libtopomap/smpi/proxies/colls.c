/* colls: OSU-style timing of MPI_Bcast, MPI_Allreduce and MPI_Alltoall over message sizes
 * (libtopomap SMPI proxy; under SMPI, --cfg=smpi/bcast:ALG etc. select the algorithm).
 *
 * usage: colls [OPS [SIZES [ITERS]]]   (defaults bcast,allreduce,alltoall 1K,64K,1M 10)
 * OPS: a comma list of bcast, allreduce, alltoall.  SIZES: a comma list of byte counts with an
 * optional K or M suffix (binary), or MIN:MAX for the powers of two from MIN to MAX.  A size is the
 * message of Bcast, the vector of Allreduce (doubles, rounded down, at least one) and the block per
 * destination of Alltoall.  After one warm-up call, ITERS calls are timed between barriers.  For each
 * (op, size) rank 0 prints
 *   LTM_COLL op=OP bytes=N iters=I avg=SECONDS
 * (the largest per-rank mean over the ranks), then one line with the sum of all timed spans:
 *   LTM_RESULT proxy=colls ranks=P ops=OPS sizes=K iters=I time=SECONDS
 */
#include "proxy.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long parse_size(const char *s, int rank)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end == 'K' || *end == 'k')
        v <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        v <<= 20, end++;
    if (*end || v < 1 || v > 0x7fffffffL) {
        if (rank == 0)
            fprintf(stderr, "colls: bad size '%s' (e.g. 1024, 64K, 1M)\n", s);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return v;
}

int main(int argc, char **argv)
{
    int rank, size;
    ltm_init(&argc, &argv, &rank, &size);
    char ops[256] = "bcast,allreduce,alltoall", sizes[256] = "1K,64K,1M";
    if (argc > 1)
        snprintf(ops, sizeof ops, "%s", argv[1]);
    if (argc > 2)
        snprintf(sizes, sizeof sizes, "%s", argv[2]);
    long iters = argc > 3 ? strtol(argv[3], NULL, 10) : 10;
    if (iters < 1) {
        if (rank == 0)
            fprintf(stderr, "colls: ITERS must be >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long list[64];
    int nsizes = 0;
    char *colon = strchr(sizes, ':');
    if (colon) {
        *colon = 0;
        long lo = parse_size(sizes, rank), hi = parse_size(colon + 1, rank);
        for (long s = lo; s <= hi && nsizes < 64; s *= 2)
            list[nsizes++] = s;
    } else {
        char tmp[256];
        snprintf(tmp, sizeof tmp, "%s", sizes);
        for (char *sp, *tok = strtok_r(tmp, ",", &sp); tok && nsizes < 64; tok = strtok_r(NULL, ",", &sp))
            list[nsizes++] = parse_size(tok, rank);
    }
    long maxs = 1;
    for (int i = 0; i < nsizes; i++)
        if (list[i] > maxs)
            maxs = list[i];
    char *sbuf = ltm_buffer((size_t)maxs * size), *rbuf = ltm_buffer((size_t)maxs * size);
    if (!sbuf || !rbuf) {
        fprintf(stderr, "colls: rank %d cannot allocate 2 x %ld bytes\n", rank, maxs * size);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    double total = 0;
    char optmp[256];
    snprintf(optmp, sizeof optmp, "%s", ops);
    for (char *sp, *op = strtok_r(optmp, ",", &sp); op; op = strtok_r(NULL, ",", &sp)) {
        int kind = !strcmp(op, "bcast") ? 0 : !strcmp(op, "allreduce") ? 1 : !strcmp(op, "alltoall") ? 2 : -1;
        if (kind < 0) {
            if (rank == 0)
                fprintf(stderr, "colls: unknown operation '%s' (bcast, allreduce, alltoall)\n", op);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        for (int i = 0; i < nsizes; i++) {
            long n = list[i];
            int dbl = n / 8 > 0 ? (int)(n / 8) : 1;
            double sum = 0;
            for (long it = -1; it < iters; it++) { /* it = -1: warm-up, not timed */
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                if (kind == 0)
                    MPI_Bcast(sbuf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
                else if (kind == 1)
                    MPI_Allreduce(sbuf, rbuf, dbl, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                else
                    MPI_Alltoall(sbuf, (int)n, MPI_BYTE, rbuf, (int)n, MPI_BYTE, MPI_COMM_WORLD);
                if (it >= 0)
                    sum += MPI_Wtime() - t0;
            }
            double avg = sum / iters, amax;
            MPI_Reduce(&avg, &amax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (rank == 0) {
                printf("LTM_COLL op=%s bytes=%ld iters=%ld avg=%.9e\n", op, n, iters, amax);
                total += amax * iters;
            }
        }
    }
    if (rank == 0)
        printf("LTM_RESULT proxy=colls ranks=%d ops=%s sizes=%d iters=%ld time=%.9e\n", size, ops, nsizes, iters,
               total);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
