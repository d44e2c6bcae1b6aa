"""A 4-rank mpi4py program of known traffic, run under Open MPI's pml/monitoring (see README.md).

External (point-to-point) bytes, exactly:
* rank r sends 1000 * (r + 1) bytes to rank (r + 1) % 4, twice (Isend + Recv);
* rank 0 sends 3 messages of 64 bytes to rank 2.
Internal: one Bcast of 4096 bytes from rank 0 (every other rank receives it once), then a Barrier.
"""
import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
r, p = comm.Get_rank(), comm.Get_size()
assert p == 4, "run with 4 ranks"
buf = np.zeros(1000 * p, np.uint8)
for _ in range(2):
    req = comm.Isend(buf[:1000 * (r + 1)], dest=(r + 1) % p)
    src = (r - 1) % p
    comm.Recv(buf[:1000 * (src + 1)], source=src)
    req.Wait()
if r == 0:
    for _ in range(3):
        comm.Send(buf[:64], dest=2)
elif r == 2:
    for _ in range(3):
        comm.Recv(buf[:64], source=0)
comm.Bcast(np.zeros(4096, np.uint8), root=0)
comm.Barrier()
