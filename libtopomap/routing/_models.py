"""The registry of routing models and the model objects: :class:`Model`, :class:`Routing`, :func:`get_routing`.

Each model is a :class:`Model` defined in its own module of this package; :func:`register` enters it in
:data:`MODELS`, which :mod:`libtopomap.routing` fills once, in the order of :data:`ROUTING_MODELS`.
"""

from __future__ import annotations

from ..errors import ArgumentError
from ..topology import native_routing
from ..vocabulary import DEFAULT_ROUTING, ROUTING_MODELS

__all__ = ["Model", "MODELS", "register", "model_of", "model_context", "Routing", "get_routing"]

#: Models named with an argument, ``"<model>:<argument>"`` (``"lft:PATH"``: the forwarding tables).
SPEC_MODELS = ("lft",)

#: Model name -> :class:`Model`, filled by :func:`register`.
MODELS = {}


def _no_context(name, topology):
    return None


class Model:
    """One routing model: what it needs of a topology and how it routes a batch of demands.

    Parameters
    ----------
    name : str
        Its name in :data:`~libtopomap.vocabulary.ROUTING_MODELS`.
    traffic : callable
        ``traffic(topology, name, ctx, s, t, w)``: the per-arc loads (``float64``, CSR arc order) of the
        demands ``s[i] -> t[i]`` of volume ``w[i]`` (checked ``int64``, ``int64``, ``float64`` arrays).
    context : callable, optional
        ``context(name, topology)``: what the kernels need of the topology (``ctx`` above), raising
        :class:`~libtopomap.errors.TopologyError` when the model cannot route on it.  Default: nothing.
    hops : callable, optional
        ``hops(topology, name, ctx, s, t)``: the links crossed by each demand; needed when not
        ``shortest``.
    shortest : bool
        Whether every route is a shortest path (hops equal the hop distance).
    """

    __slots__ = ("name", "traffic", "context", "hops", "shortest")

    def __init__(self, name, traffic, *, context=None, hops=None, shortest=True):
        self.name = name
        self.traffic = traffic
        self.context = context or _no_context
        self.hops = hops
        self.shortest = shortest

    def __repr__(self):
        return f"Model({self.name!r})"


def register(*models):
    """Enter each :class:`Model` in :data:`MODELS` under its name."""
    for m in models:
        if m.name not in ROUTING_MODELS:
            raise ArgumentError(f"routing model {m.name!r} is not in libtopomap.vocabulary.ROUTING_MODELS")
        if not m.shortest and m.hops is None:
            raise ArgumentError(f"routing model {m.name!r} is not shortest-path and has no hops")
        MODELS[m.name] = m


def model_of(name):
    """The model's name in a routing name: ``"lft"`` for ``"lft:dump.txt"``, else ``name`` itself."""
    head, sep, _ = name.partition(":")
    return head if sep and head in SPEC_MODELS else name


def model_context(name, topology):
    """What model ``name`` (a routing name, ``"lft:PATH"`` included) needs of the topology."""
    return MODELS[model_of(name)].context(name, topology)


class Routing:
    """A routing model (see :data:`ROUTING_MODELS` and the routing page of the documentation).

    Parameters
    ----------
    name : str
        One of :data:`ROUTING_MODELS`, or ``"lft:PATH"``: the forwarding tables dumped to ``PATH``
        (the model ``lft``; :attr:`name` keeps the whole string, :attr:`model` is ``"lft"``).

    Examples
    --------
    >>> import libtopomap as ltm
    >>> t = ltm.torus("4x4")
    >>> r = Routing("dimension-order")
    >>> r.shortest, ltm.route_hops(t, [0], [5], routing=r).tolist()
    (True, [2])
    """

    __slots__ = ("name", "model")

    def __init__(self, name):
        model = model_of(name) if isinstance(name, str) else name
        if model not in ROUTING_MODELS:
            raise ArgumentError(f"routing must be one of {', '.join(ROUTING_MODELS)} (or 'native', or "
                                f"'lft:PATH'), got {name!r}")
        if model in SPEC_MODELS and (model == name or not name.partition(":")[2].strip()):
            raise ArgumentError(f"routing {model!r} needs its argument: {model}:PATH (the forwarding tables of "
                                f"the fabric, e.g. dump_lfts output)")
        self.name = name
        self.model = model

    def __repr__(self):
        return f"Routing({self.name!r})"

    def __eq__(self, other):
        return isinstance(other, Routing) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    @property
    def shortest(self):
        """Whether every route is a shortest path (hops equal the hop distance)."""
        return MODELS[self.model].shortest

    def check(self, topology):
        """Raise :class:`~libtopomap.errors.TopologyError` when this model cannot route on ``topology``."""
        model_context(self.name, topology)


def get_routing(routing=None, topology=None):
    """A :class:`Routing` from a name, ``"native"`` (needs ``topology``), a Routing, or None (the default).

    Raises
    ------
    ArgumentError
        An unknown name.
    """
    if isinstance(routing, Routing):
        return routing
    if routing is None:
        return Routing(DEFAULT_ROUTING)
    if routing == "native":
        if topology is None:
            raise ArgumentError("routing='native' needs a topology")
        return Routing(native_routing(topology))
    if not isinstance(routing, str):
        raise ArgumentError(f"routing must be a name ({', '.join(ROUTING_MODELS)}, native), got {routing!r}")
    return Routing(routing)
