/* edges.h: read the edge list "src dst bytes" of replay.c and cg.c (libtopomap SMPI proxies).
 * Keeps only this rank's messages: out (edges from it) and in (edges into it), in file order. */
#ifndef LTM_EDGES_H
#define LTM_EDGES_H
#include "proxy.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { int peer; int bytes; } ltm_msg;
typedef struct { ltm_msg *v; size_t n, cap; } ltm_msgs;

static void ltm_push(ltm_msgs *a, int peer, int bytes)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 16;
        a->v = realloc(a->v, a->cap * sizeof(ltm_msg));
        if (!a->v) {
            fprintf(stderr, "out of memory reading the edge list\n");
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
    a->v[a->n].peer = peer;
    a->v[a->n].bytes = bytes;
    a->n++;
}

/* Reads PATH; returns the number of edges (self and zero-byte edges counted, not kept), sets *total to
 * their bytes and *maxb to the largest kept message.  A bad line aborts with "PROG: PATH:LINE: ...". */
static long ltm_read_edges(const char *prog, const char *path, int rank, int size, ltm_msgs *out, ltm_msgs *in,
                           double *total, size_t *maxb)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        if (rank == 0)
            fprintf(stderr, "%s: cannot open %s\n", prog, path);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char line[512];
    long lineno = 0, edges = 0;
    *total = 0;
    *maxb = 1;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        long s, d;
        double b;
        char extra;
        int got = sscanf(line, "%ld %ld %lf %c", &s, &d, &b, &extra);
        if (got <= 0)
            continue; /* blank line */
        if (got != 3 || s < 0 || d < 0 || s >= size || d >= size || !(b >= 0) || b > INT_MAX || b != (long)b) {
            if (rank == 0)
                fprintf(stderr, "%s: %s:%ld: expected 'src dst bytes' with ranks below %d and 0 <= bytes <= %d\n",
                        prog, path, lineno, size, INT_MAX);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        edges++;
        *total += b;
        if (s == d || b == 0)
            continue;
        if ((size_t)b > *maxb)
            *maxb = (size_t)b;
        if (s == rank)
            ltm_push(out, (int)d, (int)b);
        if (d == rank)
            ltm_push(in, (int)s, (int)b);
    }
    fclose(f);
    return edges;
}

/* The end of replay.c and cg.c: their buffers and message lists freed, then MPI_Finalize. */
static void ltm_finish_exchange(char *sbuf, char *rbuf, MPI_Request *req, ltm_msgs *out, ltm_msgs *in)
{
    free(sbuf);
    free(rbuf);
    free(req);
    free(out->v);
    free(in->v);
    MPI_Finalize();
}
#endif
