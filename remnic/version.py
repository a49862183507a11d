"""The package version, apart from everything else so any layer can name it."""

__version__ = "0.1.0"
