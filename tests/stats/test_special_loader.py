"""workbench.stats._special: scipy.special's ufuncs without the package's array-API layer,
the same objects (so the same numbers to the last bit), and scipy.special whole afterwards."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
from workbench.stats._tdist import t_quantile, t_sf
q = t_quantile(0.975, 5.603220153406623)
p = t_sf(72.20727349981395, 5.612144106707339)
light = "scipy._lib._array_api" not in sys.modules and "scipy.special" not in sys.modules
import scipy.special, scipy.stats
from workbench.stats._special import special
assert special().stdtrit is scipy.special.stdtrit and special().stdtr is scipy.special.stdtr
assert q == float(scipy.special.stdtrit(5.603220153406623, 0.975)) == 2.4895337836745823
assert p == float(scipy.stats.t.sf(72.20727349981395, 5.612144106707339))
assert scipy.special.gamma(5.0) == 24.0 and hasattr(scipy.special, "logsumexp")
print("light" if light else "heavy")
"""


def test_ufuncs_load_alone_and_the_package_still_imports_whole():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "light"


def test_an_already_imported_package_is_used_as_is():
    script = "import scipy.special\nfrom workbench.stats._special import special\nassert special() is scipy.special\n"
    subprocess.run([sys.executable, "-c", script], check=True)


def test_a_thread_importing_the_package_meanwhile_gets_the_whole_package():
    script = """
import threading
from workbench.stats import _special
got = []
def other():
    import scipy.special
    got.append(scipy.special.logsumexp([0.0, 0.0]))
threads = [threading.Thread(target=_special.special)] + [threading.Thread(target=other) for _ in range(3)]
for t in threads: t.start()
for t in threads: t.join()
import math
assert len(got) == 3 and all(abs(g - math.log(2)) < 1e-15 for g in got), got
"""
    subprocess.run([sys.executable, "-c", script], check=True)
