/* dtypes: calibration helper of libtopomap.smpi (not a proxy).  SMPI's time-independent trace
 * (-trace-ti) writes a message as an element count and a datatype number; run under -trace-ti, this
 * program sends rank 0 one element of each predefined datatype with tag k, and prints
 *   LTM_DTYPE k SIZE
 * so the trace's datatype number of tag k has MPI_Type_size SIZE. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Datatype types[] = {MPI_CHAR, MPI_SHORT, MPI_INT, MPI_LONG, MPI_LONG_LONG, MPI_SIGNED_CHAR,
                            MPI_UNSIGNED_CHAR, MPI_UNSIGNED_SHORT, MPI_UNSIGNED, MPI_UNSIGNED_LONG,
                            MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_WCHAR,
                            MPI_C_BOOL, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T,
                            MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
                            MPI_BYTE, MPI_PACKED, MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT,
                            MPI_SHORT_INT, MPI_AINT, MPI_OFFSET, MPI_COUNT};
    int n = (int)(sizeof types / sizeof types[0]);
    if (rank == 0) {
        char in[64], out[64] = {0};
        for (int k = 0; k < n; k++) {
            int size;
            MPI_Request r[2];
            MPI_Type_size(types[k], &size);
            MPI_Irecv(in, 1, types[k], 0, k, MPI_COMM_WORLD, &r[0]);
            MPI_Isend(out, 1, types[k], 0, k, MPI_COMM_WORLD, &r[1]);
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
            printf("LTM_DTYPE %d %d\n", k, size);
        }
    }
    MPI_Finalize();
    return 0;
}
