"""Print the environment that runs the portability pass of .ci/run: another BLAS kernel
than this machine's and numpy's dispatched SIMD turned off, as `NAME=VALUE` lines.

A byte-level dependence on the CPU (a golden that holds the last bits of a BLAS sum, a
digest over such floats) then fails here, on the developer's machine, before it fails
on a user's (issue 26; tests/golden/structural.py, docs/methods.md).
"""

from __future__ import annotations

import os
import platform

from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

machine = platform.machine().lower()
if machine in ("x86_64", "amd64"):
    # Haswell (AVX2) unless the machine is already told to use it; Sandybridge (AVX) then.
    kernel = "Sandybridge" if os.environ.get("OPENBLAS_CORETYPE", "").lower() == "haswell" else "Haswell"
else:
    kernel = "ARMV8" if machine in ("aarch64", "arm64") else ""
found = [feature for feature in __cpu_dispatch__ if __cpu_features__.get(feature)]
if kernel:
    print(f"OPENBLAS_CORETYPE={kernel}")
if found:  # everything above numpy's baseline, so the widest SIMD this CPU has is off
    print(f"NPY_DISABLE_CPU_FEATURES={' '.join(found)}")
