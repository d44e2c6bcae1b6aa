/* proxy.h: the start every libtopomap SMPI proxy shares. */
#ifndef LTM_PROXY_H
#define LTM_PROXY_H
#include <mpi.h>

/* MPI_Init, then this rank and the size of MPI_COMM_WORLD. */
static void ltm_init(int *argc, char ***argv, int *rank, int *size)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
}

#endif
