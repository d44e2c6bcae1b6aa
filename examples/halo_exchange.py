"""A 2-D Jacobi halo exchange in mpi4py, made topology-aware with a one-line change.

Run (the defaults use the bundled 4x2 torus and a fake-names layout that spreads the ranks badly)::

    mpiexec -n 8 python examples/halo_exchange.py
    mpiexec -n 8 python examples/halo_exchange.py --no-reorder      # plain mpi4py, same result

The application is an ordinary mpi4py program: a periodic 2-D process grid, each process owning an
``n x n`` block, exchanging one-row/column halos with ``Neighbor_alltoall`` on a distributed-graph
communicator.  The only change is the line marked ``ONE-LINE CHANGE``::

    -    grid = comm.Create_dist_graph_adjacent(sources, destinations, reorder=True)
    +    grid = ltm.Create_dist_graph_adjacent(comm, sources, destinations, reorder=True, topology=topo)

Rank ``k`` of the returned communicator still plays block ``k`` of the grid, so nothing else in the
program changes, and the checksum printed at the end is the same with and without reordering.
"""

import argparse
import pathlib

import numpy as np
from mpi4py import MPI

import libtopomap as ltm
from libtopomap.mpi import last_report

HERE = pathlib.Path(__file__).resolve().parent
TOPO_FILES = HERE.parent / "topology_files"


def neighbours(rank, dims):
    """Sources (up, down, left, right) and destinations (down, up, right, left) on the periodic grid.

    Destinations are listed opposite to sources so that, when the grid is only 2 wide and "up" and
    "down" are the same process, the i-th message to that process lands in its matching i-th slot.
    """
    py, px = dims
    y, x = divmod(rank, px)
    up, down = ((y - 1) % py) * px + x, ((y + 1) % py) * px + x
    left, right = y * px + (x - 1) % px, y * px + (x + 1) % px
    return [up, down, left, right], [down, up, right, left]


def initial_block(rank, dims, n):
    """The block of the global field sin(2 pi X) cos(2 pi Y) + X Y that this logical rank owns."""
    py, px = dims
    y, x = divmod(rank, px)
    gy = (y * n + np.arange(n))[:, None] / (py * n)
    gx = (x * n + np.arange(n))[None, :] / (px * n)
    return np.sin(2 * np.pi * gx) * np.cos(2 * np.pi * gy) + gx * gy


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--topology", default=str(TOPO_FILES / "demo_torus_4x2.topo"))
    ap.add_argument("--fake-names", "--fake-hosts", default=str(TOPO_FILES / "demo_torus_4x2.names"),
                    help="fake-names file ('' to use the real hostnames)")
    ap.add_argument("--block", type=int, default=64, help="local block edge (default 64)")
    ap.add_argument("--steps", type=int, default=50, help="Jacobi sweeps (default 50)")
    ap.add_argument("--no-reorder", action="store_true", help="plain mpi4py, no reordering")
    args = ap.parse_args()

    comm = MPI.COMM_WORLD
    dims = MPI.Compute_dims(comm.Get_size(), 2)
    sources, destinations = neighbours(comm.Get_rank(), dims)

    if args.no_reorder:
        grid = comm.Create_dist_graph_adjacent(sources, destinations, reorder=True)
    else:
        topo = ltm.load(args.topology)
        # ONE-LINE CHANGE (was: grid = comm.Create_dist_graph_adjacent(sources, destinations, reorder=True))
        grid = ltm.Create_dist_graph_adjacent(comm, sources, destinations, reorder=True, topology=topo,
                                              fake_names=args.fake_names or None, seed=0)

    # From here on the program only talks to `grid`; its rank k owns block k.
    k = grid.Get_rank()
    srcs, dsts, _ = grid.Get_dist_neighbors()
    assert (srcs, dsts) == neighbours(k, dims)
    n = args.block
    u = np.zeros((n + 2, n + 2))
    u[1:-1, 1:-1] = initial_block(k, dims, n)
    send = np.empty((4, n))
    recv = np.empty((4, n))

    grid.Barrier()
    t0 = MPI.Wtime()
    for _ in range(args.steps):
        # to (down, up, right, left): my bottom row, top row, right column, left column
        send[0], send[1] = u[n, 1:-1], u[1, 1:-1]
        send[2], send[3] = u[1:-1, n], u[1:-1, 1]
        grid.Neighbor_alltoall(send, recv)
        # from (up, down, left, right): into the top, bottom, left and right halos
        u[0, 1:-1], u[n + 1, 1:-1] = recv[0], recv[1]
        u[1:-1, 0], u[1:-1, n + 1] = recv[2], recv[3]
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    elapsed = MPI.Wtime() - t0
    checksum = grid.allreduce(float(u[1:-1, 1:-1].sum()), op=MPI.SUM)
    slowest = grid.allreduce(elapsed, op=MPI.MAX)

    if k == 0:
        print(f"{grid.Get_size()} ranks, grid {dims[0]}x{dims[1]}, block {n}x{n}, {args.steps} sweeps")
        report = last_report(grid)
        if report is not None:
            print(report.summary())
        print(f"time per sweep (slowest rank): {slowest / args.steps * 1e6:.1f} us")
        print(f"checksum: {checksum:.12e}")
    grid.Free()


if __name__ == "__main__":
    main()
