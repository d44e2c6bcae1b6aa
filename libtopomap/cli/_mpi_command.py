"""Running a CLI command on every rank of ``mpiexec``."""

from ..errors import ArgumentError, LibTopoMapError

__all__ = ["run_on_every_rank"]


def run_on_every_rank(body, args):
    """Run ``body(args)`` on every rank; on a library error only rank 0 lets it through to be printed.

    The MPI layer agrees on errors collectively (every rank raises the same
    :class:`~libtopomap.CommError`), so printing it once is enough; the other ranks exit quietly with
    the status rank 0 exits with (2 for a usage error, :class:`~libtopomap.ArgumentError`, else 1): a
    launcher that combines the ranks' statuses (MPICH's ``mpiexec`` ORs them) then reports that one.
    """
    from mpi4py import MPI

    try:
        return body(args)
    except LibTopoMapError as e:
        if MPI.COMM_WORLD.Get_rank() == 0:
            raise
        return 2 if isinstance(e, ArgumentError) else 1
