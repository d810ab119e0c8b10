"""Helpers of the ``privnoise`` command (:mod:`privnoise.cli`): option parsing, rendering and the demo.

Nothing here is public API; the command itself is a thin layer over ``design → sample → Release``.
"""
