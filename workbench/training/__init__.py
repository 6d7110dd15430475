"""Trace analysis for the training lens (docs/training.md).

``model.py`` the normalized rank trace; ``span_sets.py`` unions and window lengths of time spans;
``breakdown.py`` the per-step figures and operations; ``iterations.py`` the steps of a trace
without step markers; ``step_facts.py`` per rank, then ``window_kind.py``, ``boundaries.py`` and
``clocks.py`` per job; ``step_findings.py`` what the samples show (found, not found, undecided);
``coverage.py`` launches without recorded kernels; ``pair_findings.py`` per compared pair (host
time, shapes, memory); ``ranks.py`` ranks as a dimension; ``job.py`` the run assembly, with
rank files read in local processes (``parallel.py``) or on a Dask cluster (``cluster.py``).
"""
