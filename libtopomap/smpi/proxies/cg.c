/* cg: the communication of a conjugate-gradient solver on a partitioned 3-D mesh (libtopomap SMPI proxy).
 *
 * usage: cg [MESH [ITERS]]   (defaults 64x64x64 10)
 * MESH is either NXxNYxNZ, a mesh of cells cut into blocks over the 3-D process grid of
 * MPI_Dims_create(P, 3) (not periodic: a rank exchanges one face of 8-byte values with each of its up
 * to 6 face neighbours), or an edge-list file "src dst bytes" of a partitioned mesh: the bytes part
 * src sends to part dst in one halo exchange (the quotient graph of a METIS or other partition of an
 * unstructured mesh; libtopomap.smpi.write_edge_list writes one from a CommGraph).
 * Each iteration: the neighbour exchange (Irecv/Isend/Waitall, the sparse matrix-vector product's
 * halo), then two MPI_Allreduce of one double (the dot products).  No arithmetic.  Rank 0 prints:
 *   LTM_RESULT proxy=cg ranks=P mesh=MESH neighbours=MAX bytes=B iters=I time=SECONDS
 * (neighbours: the most any rank has; bytes: one exchange's total).
 */
#include "edges.h"

static long share(long n, int parts, int i) /* cells of block i when n cells are cut into parts */
{
    return n / parts + (i < n % parts ? 1 : 0);
}

int main(int argc, char **argv)
{
    int rank, size;
    ltm_init(&argc, &argv, &rank, &size);
    const char *mesh = argc > 1 ? argv[1] : "64x64x64";
    long iters = argc > 2 ? strtol(argv[2], NULL, 10) : 10;
    if (iters < 1) {
        if (rank == 0)
            fprintf(stderr, "cg: ITERS must be >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    ltm_msgs out = {0}, in = {0};
    double total = 0;
    size_t maxb = 1;
    long nx, ny, nz;
    char extra;
    if (sscanf(mesh, "%ldx%ldx%ld%c", &nx, &ny, &nz, &extra) == 3) {
        long n[3] = {nx, ny, nz};
        int dims[3] = {0, 0, 0}, periods[3] = {0, 0, 0}, coords[3];
        MPI_Dims_create(size, 3, dims);
        for (int d = 0; d < 3; d++)
            if (n[d] < dims[d]) {
                if (rank == 0)
                    fprintf(stderr, "cg: mesh %s has fewer cells than the %dx%dx%d process grid\n", mesh, dims[0],
                            dims[1], dims[2]);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
        MPI_Comm cart;
        MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
        MPI_Cart_coords(cart, rank, 3, coords);
        for (int d = 0; d < 3; d++) {
            long face = 8;
            for (int e = 0; e < 3; e++)
                if (e != d)
                    face *= share(n[e], dims[e], coords[e]);
            int lo, hi;
            MPI_Cart_shift(cart, d, 1, &lo, &hi);
            if (face > INT_MAX) {
                fprintf(stderr, "cg: a face of %ld bytes is over INT_MAX\n", face);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            /* the neighbour's face has the same extent in the other dimensions */
            int nbs[2] = {lo, hi};
            for (int k = 0; k < 2; k++)
                if (nbs[k] != MPI_PROC_NULL) {
                    ltm_push(&out, nbs[k], (int)face);
                    ltm_push(&in, nbs[k], (int)face);
                    if ((size_t)face > maxb)
                        maxb = (size_t)face;
                }
        }
        double mine = 0;
        for (size_t i = 0; i < out.n; i++)
            mine += out.v[i].bytes;
        MPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Comm_free(&cart);
    } else {
        ltm_read_edges("cg", mesh, rank, size, &out, &in, &total, &maxb);
    }
    int nbmine = (int)out.n, nbmax;
    MPI_Reduce(&nbmine, &nbmax, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    char *sbuf = ltm_buffer(maxb), *rbuf = ltm_buffer(maxb * (in.n + 1));
    MPI_Request *req = malloc((in.n + out.n + 1) * sizeof(MPI_Request));
    if (!sbuf || !rbuf || !req) {
        fprintf(stderr, "cg: rank %d cannot allocate its buffers\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    double x = 1.0, dot;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long it = 0; it < iters; it++) {
        size_t k = 0;
        for (size_t i = 0; i < in.n; i++)
            MPI_Irecv(rbuf + i * maxb, in.v[i].bytes, MPI_BYTE, in.v[i].peer, 0, MPI_COMM_WORLD, &req[k++]);
        for (size_t i = 0; i < out.n; i++)
            MPI_Isend(sbuf, out.v[i].bytes, MPI_BYTE, out.v[i].peer, 0, MPI_COMM_WORLD, &req[k++]);
        MPI_Waitall((int)k, req, MPI_STATUSES_IGNORE);
        MPI_Allreduce(&x, &dot, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(&x, &dot, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    double t = MPI_Wtime() - t0, tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("LTM_RESULT proxy=cg ranks=%d mesh=%s neighbours=%d bytes=%.0f iters=%ld time=%.9e\n", size, mesh,
               nbmax, total, iters, tmax);
    ltm_finish_exchange(sbuf, rbuf, req, &out, &in);
    return 0;
}
