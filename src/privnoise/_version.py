"""The version of privnoise (the same as in ``pyproject.toml``), importable by every layer."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
