"""The version of libtopomap, in one place (read by pyproject.toml, ``libtopomap.__version__`` and
``libtopomap --version``)."""

__version__ = "0.1.0"
