"""The package's version (a leaf: the session writes it into each trace)."""

__version__ = "0.1.0"
