"""Everything that reads a snapshot: messages, diagnostics, metrics, summary, tables, gate.

The ``reporter`` stands between the session and these outputs; each output reads the
figures through the one figure table (``analysis/figures.py``).
"""

__all__: list[str] = []
