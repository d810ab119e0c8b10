"""The commands of ``privnoise`` (added by :mod:`privnoise.cli`) and their helpers: option parsing, rendering
and the demo.

Nothing here is public API; the command itself is a thin layer over ``design → sample → Release``.
"""
