"""``workbench.recorder``: an in-process flight recorder for GPU workloads.

Keeps the recent past of a training loop or a server in bounded memory (step and
request spans with their phases, GPU observations from NVML) and writes a snapshot as
a native capture (``workbench.capture/1``) on demand, at a workload boundary, or when a
step is slower than a threshold or k times the recent median::

    from workbench.recorder import Recorder
    rec = Recorder(dimensions={"model": "resnet50", ...})
    for batch in loader:
        with rec.step():
            ...

Importing this package loads only the standard library (no Textual, no store, no
scipy, no pynvml); numpy, pynvml, cupy and the store load lazily on the threads that
need them. ``WB_RECORDER=off`` turns every recorder into a no-op. See docs/recorder.md.

Modules: ``handoff.py`` the one door to a store (the writer thread loads it); ``host.py``
samples stacks, CPU, memory and GC pauses and ``host_capture.py`` writes them into a snapshot;
``watchdog.py`` snapshots a step that never ends, ``termination.py`` on SIGTERM/SIGINT;
``snapshot_socket.py`` answers ``wb snapshot PID``; ``moment.py`` and ``rowsearch.py`` the open span and
phase and every thread's stack.
"""

from workbench.recorder.config import DISABLE_ENV, Budget, RecorderConfig
from workbench.recorder.recorder import Recorder
from workbench.recorder.trigger import TriggerRule

__all__ = ["Budget", "DISABLE_ENV", "Recorder", "RecorderConfig", "TriggerRule"]
