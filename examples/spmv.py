"""A distributed sparse matrix-vector product (power iteration) on a METIS-partitioned mesh.

Run (the defaults use the bundled 4x2 torus and a fake-names layout that spreads the ranks badly)::

    mpiexec -n 8 python examples/spmv.py
    mpiexec -n 8 python examples/spmv.py --no-reorder

The matrix is the 5-point Laplacian of a ``G x G`` mesh plus a few random long-range couplings; its rows
are split over the processes by METIS, whose part numbers say nothing about where processes run.
Process ``k`` owns the rows of part ``k`` and, before every product, sends the entries of ``x`` it owns
to the processes whose rows use them (``Neighbor_alltoallv``).  The communication graph is declared
with the general ``Create_dist_graph`` (each process names its outgoing edges, weighted by bytes), and
``ltm.Create_dist_graph`` reorders it onto the topology in place of ``comm.Create_dist_graph``.  The
result is checked against a serial product on rank 0.
"""

import argparse
import pathlib

import numpy as np
import scipy.sparse as sp
from mpi4py import MPI

import libtopomap as ltm
from libtopomap.mpi import last_report

HERE = pathlib.Path(__file__).resolve().parent
TOPO_FILES = HERE.parent / "topology_files"


def build_matrix(g, extra, seed):
    """5-point Laplacian of a g x g mesh plus ``extra`` random symmetric couplings (CSR)."""
    lap1 = sp.diags([-np.ones(g - 1), 2 * np.ones(g), -np.ones(g - 1)], [-1, 0, 1])
    a = (sp.kron(sp.identity(g), lap1) + sp.kron(lap1, sp.identity(g))).tocsr()
    rng = np.random.default_rng(seed)
    i = rng.integers(0, g * g, extra)
    j = rng.integers(0, g * g, extra)
    keep = i != j
    r = sp.coo_matrix((np.full(keep.sum(), -0.1), (i[keep], j[keep])), shape=a.shape)
    return (a + r + r.T).tocsr()


def partition(a, nparts):
    """METIS k-way partition of the matrix graph: part of every row."""
    import pymetis

    if nparts == 1:
        return np.zeros(a.shape[0], dtype=np.int64)
    s = (a != 0).astype(np.int8).tocsr()
    s.setdiag(0)
    s.eliminate_zeros()
    _, parts = pymetis.part_graph(nparts, adjacency=pymetis.CSRAdjacency(s.indptr, s.indices))
    return np.asarray(parts, dtype=np.int64)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--topology", default=str(TOPO_FILES / "demo_torus_4x2.topo"))
    ap.add_argument("--fake-names", "--fake-hosts", default=str(TOPO_FILES / "demo_torus_4x2.names"),
                    help="fake-names file ('' to use the real hostnames)")
    ap.add_argument("--mesh", type=int, default=48, help="mesh edge G (matrix of G*G rows; default 48)")
    ap.add_argument("--iterations", type=int, default=30, help="power iterations (default 30)")
    ap.add_argument("--no-reorder", action="store_true", help="plain mpi4py, no reordering")
    args = ap.parse_args()

    comm = MPI.COMM_WORLD
    size = comm.Get_size()
    # The matrix and its partition are made once and broadcast (METIS runs on rank 0 only).
    a, parts = (build_matrix(args.mesh, args.mesh, seed=1), None) if comm.Get_rank() == 0 else (None, None)
    if comm.Get_rank() == 0:
        parts = partition(a, size)
    a, parts = comm.bcast((a, parts), root=0)

    # Who needs what: x[c] (owned by parts[c]) is needed by the owner of every row r with a[r, c] != 0.
    coo = a.tocoo()
    cross = parts[coo.row] != parts[coo.col]
    need = np.unique(np.stack([parts[coo.col][cross], parts[coo.row][cross], coo.col[cross]], 1), axis=0)

    def send_lists(k):
        """Destinations of logical process k and, per destination, the global indices it sends."""
        mine = need[need[:, 0] == k]
        dests = np.unique(mine[:, 1])
        return dests.tolist(), [mine[mine[:, 1] == d, 2] for d in dests]

    me = comm.Get_rank()
    dests, _ = send_lists(me)
    weights = [8 * len(ix) for ix in send_lists(me)[1]]  # bytes per product

    if args.no_reorder:
        dcomm = comm.Create_dist_graph([me], [len(dests)], dests, weights, reorder=True)
    else:
        topo = ltm.load(args.topology)
        # ONE-LINE CHANGE (was: dcomm = comm.Create_dist_graph([me], [len(dests)], dests, weights, reorder=True))
        dcomm = ltm.Create_dist_graph(comm, [me], [len(dests)], dests, weights, reorder=True, topology=topo,
                                      fake_names=args.fake_names or None, seed=0)

    # From here on: logical process k = rank k of dcomm, with the neighbour order MPI gives.
    k = dcomm.Get_rank()
    srcs, dsts, _ = dcomm.Get_dist_neighbors()
    rows = np.flatnonzero(parts == k)
    send_ix = dict(zip(*send_lists(k)))
    send_idx = np.concatenate([send_ix[d] for d in dsts]) if dsts else np.zeros(0, np.int64)
    recv_idx = [need[(need[:, 0] == s) & (need[:, 1] == k), 2] for s in srcs]
    scounts = [len(send_ix[d]) for d in dsts]
    rcounts = [len(ix) for ix in recv_idx]
    recv_idx = np.concatenate(recv_idx) if recv_idx else np.zeros(0, np.int64)
    local_a = a[rows]                                      # my rows, global column numbering
    x_full = np.zeros(a.shape[0])                          # only my entries and my halo are used
    x_full[rows] = 1.0 + (rows % 7) / 7.0
    sendbuf = np.empty(send_idx.size)
    recvbuf = np.empty(recv_idx.size)

    dcomm.Barrier()
    t0 = MPI.Wtime()
    for _ in range(args.iterations):
        sendbuf[:] = x_full[send_idx]
        dcomm.Neighbor_alltoallv([sendbuf, scounts], [recvbuf, rcounts])
        x_full[recv_idx] = recvbuf
        y = local_a @ x_full
        norm = np.sqrt(dcomm.allreduce(float(y @ y), op=MPI.SUM))
        x_full[rows] = y / norm
    elapsed = dcomm.allreduce(MPI.Wtime() - t0, op=MPI.MAX)

    # Check: gather x, redo the same iterations serially on rank 0.
    gathered = dcomm.gather((rows, x_full[rows]), root=0)
    if k == 0:
        x = np.empty(a.shape[0])
        for r_, v in gathered:
            x[r_] = v
        ref = 1.0 + (np.arange(a.shape[0]) % 7) / 7.0
        for _ in range(args.iterations):
            y = a @ ref
            ref = y / np.linalg.norm(y)
        err = float(np.abs(x - ref).max())
        print(f"{size} ranks, {a.shape[0]} rows, {a.nnz} nonzeros, {len(need)} halo entries per product")
        rep = last_report(dcomm)
        if rep is not None:
            print(rep.summary())
        print(f"time per iteration (slowest rank): {elapsed / args.iterations * 1e6:.1f} us")
        print(f"largest eigenvalue estimate {norm:.10f}; max |x - serial x| = {err:.2e}")
        if err > 1e-10:
            raise SystemExit("distributed result differs from the serial one")
    dcomm.Free()


if __name__ == "__main__":
    main()
