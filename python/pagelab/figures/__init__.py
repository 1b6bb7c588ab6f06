"""Figures (matplotlib), one module per kind: ``curves`` (fault curves, miss-ratio
curves), ``memory`` (memory-time and space-time graphs of timed runs), ``bars`` (grouped
bars, paging activity), ``faults`` (the fault-parameter figures), on the common
``style``. They take plain data (DataFrames, result dicts), never run anything, and
import nothing above pagelab's foundation."""
