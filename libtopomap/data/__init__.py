"""Data files installed with libtopomap (read with importlib.resources); see README.md here."""
