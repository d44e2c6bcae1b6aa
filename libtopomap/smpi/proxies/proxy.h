/* proxy.h: the start every libtopomap SMPI proxy shares. */
#ifndef LTM_PROXY_H
#define LTM_PROXY_H
#include <mpi.h>
#include <stdlib.h>

/* A message buffer.  Under SMPI every rank's buffer maps one shared block (SMPI_SHARED_MALLOC, freed by
 * free() as smpicc redefines it): the proxies never read what they receive, and private buffers cost
 * ranks x bytes of memory (4,096 halo ranks x 320 KiB = 1.3 GB).  Elsewhere plain zeroed memory. */
static void *ltm_buffer(size_t bytes)
{
#ifdef SMPI_SHARED_MALLOC
    return SMPI_SHARED_MALLOC(bytes > 0 ? bytes : 1);
#else
    return calloc(bytes > 0 ? bytes : 1, 1);
#endif
}

/* MPI_Init, then this rank and the size of MPI_COMM_WORLD. */
static void ltm_init(int *argc, char ***argv, int *rank, int *size)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
}

#endif
