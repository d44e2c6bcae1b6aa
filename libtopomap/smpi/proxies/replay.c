/* replay: send, every iteration, the bytes of every edge of an edge list (libtopomap SMPI proxy).
 *
 * usage: replay EDGEFILE [ITERS]   (ITERS default 1)
 * EDGEFILE has one edge per line, "src dst bytes" (ranks of MPI_COMM_WORLD, '#' starts a comment);
 * libtopomap.smpi.write_edge_list writes one from any CommGraph (an ltm.trace of an mpi4py code,
 * Open MPI monitoring files...).  Each iteration every rank posts an MPI_Irecv for each edge into it
 * and an MPI_Isend for each edge out of it, in file order (tag 0: MPI's non-overtaking rule pairs
 * them), then MPI_Waitall.  Self edges and zero-byte edges are skipped; an edge of more than INT_MAX
 * bytes is an error.  Rank 0 prints one line:
 *   LTM_RESULT proxy=replay ranks=P edges=E bytes=B iters=I time=SECONDS
 * where time is the largest MPI_Wtime span of the timed loop over the ranks.
 */
#include "edges.h"

int main(int argc, char **argv)
{
    int rank, size;
    ltm_init(&argc, &argv, &rank, &size);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: replay EDGEFILE [ITERS]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long iters = argc > 2 ? strtol(argv[2], NULL, 10) : 1;
    if (iters < 1) {
        if (rank == 0)
            fprintf(stderr, "replay: ITERS must be >= 1, got '%s'\n", argv[2]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    ltm_msgs out = {0}, in = {0};
    double total;
    size_t maxb;
    long edges = ltm_read_edges("replay", argv[1], rank, size, &out, &in, &total, &maxb);
    char *sbuf = ltm_buffer(maxb), *rbuf = ltm_buffer(maxb);
    MPI_Request *req = malloc((in.n + out.n + 1) * sizeof(MPI_Request));
    if (!sbuf || !rbuf || !req) {
        fprintf(stderr, "replay: rank %d cannot allocate its buffers\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    /* received data is discarded: every receive shares one buffer */
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long it = 0; it < iters; it++) {
        size_t k = 0;
        for (size_t i = 0; i < in.n; i++)
            MPI_Irecv(rbuf, in.v[i].bytes, MPI_BYTE, in.v[i].peer, 0, MPI_COMM_WORLD, &req[k++]);
        for (size_t i = 0; i < out.n; i++)
            MPI_Isend(sbuf, out.v[i].bytes, MPI_BYTE, out.v[i].peer, 0, MPI_COMM_WORLD, &req[k++]);
        MPI_Waitall((int)k, req, MPI_STATUSES_IGNORE);
    }
    double t = MPI_Wtime() - t0, tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("LTM_RESULT proxy=replay ranks=%d edges=%ld bytes=%.0f iters=%ld time=%.9e\n", size, edges, total,
               iters, tmax);
    ltm_finish_exchange(sbuf, rbuf, req, &out, &in);
    return 0;
}
