"""The package version (a module of its own: the catalog records it, and the package root imports lake)."""

__version__ = "0.1.0"
