"""The package version, importable without importing the rest of mathir."""

__version__ = "0.1.0"
