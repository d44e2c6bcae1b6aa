"""Running a CLI command on every rank of ``mpiexec``."""

from ..errors import LibTopoMapError

__all__ = ["run_on_every_rank"]


def run_on_every_rank(body, args):
    """Run ``body(args)`` on every rank; on a library error only rank 0 lets it through to be printed.

    The MPI layer agrees on errors collectively (every rank raises the same
    :class:`~libtopomap.CommError`), so printing it once is enough; the other ranks exit 1 quietly.
    """
    from mpi4py import MPI

    try:
        return body(args)
    except LibTopoMapError:
        if MPI.COMM_WORLD.Get_rank() == 0:
            raise
        return 1
