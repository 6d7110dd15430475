"""scipy.special's compiled functions without the package's array-API layer.

``import scipy.special`` runs the package's ``__init__``, which clones numpy's namespace
for the array API (loading numpy.testing, numpy.f2py, numpy.ma, ...): about 0.2 s, more
than the rest of a ``wb compare``. The functions the statistics use (``stdtrit``, ``stdtr``,
``ndtr``, ``betainc``, ...) are plain numpy ufuncs in ``scipy.special._ufuncs``, the very
objects ``scipy.special`` exports when ``SCIPY_ARRAY_API`` is unset, so loading that
extension alone gives the same numbers to the last bit in a tenth of the time.

How: while ``_ufuncs`` loads, ``scipy.special`` is a bare package module marked as
initialising (what Python itself leaves in ``sys.modules`` while a package imports), under
that module's import lock, so another thread importing ``scipy.special`` meanwhile waits;
should it be handed the bare module, its attributes come from the whole package, imported
then as usual. Where that is not possible (the package is already loaded, or importlib's
internals differ), the ordinary import is used.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from typing import Any

_PACKAGE = "scipy.special"
_lock = threading.Lock()
_ufuncs: Any = None


def special() -> Any:
    """The module holding scipy.special's ufuncs (``scipy.special._ufuncs`` or the package)."""
    global _ufuncs
    if _ufuncs is None:
        with _lock:
            if _ufuncs is None:
                _ufuncs = _load()
    return _ufuncs


def _load() -> Any:
    if _PACKAGE in sys.modules:
        return sys.modules[_PACKAGE]
    if _PACKAGE + "._ufuncs" in sys.modules:
        return sys.modules[_PACKAGE + "._ufuncs"]
    bootstrap = getattr(importlib, "_bootstrap", None)
    lock_manager = getattr(bootstrap, "_ModuleLockManager", None)
    import scipy  # light: the top-level package only

    spec = importlib.util.find_spec(_PACKAGE)
    if lock_manager is None or spec is None or spec.submodule_search_locations is None:
        return importlib.import_module(_PACKAGE)
    stub_spec = importlib.util.spec_from_loader(_PACKAGE, loader=None, is_package=True)
    stub_spec.submodule_search_locations = list(spec.submodule_search_locations)
    stub_spec._initializing = True  # others wait on the module lock
    stub = types.ModuleType(_PACKAGE)
    stub.__path__ = stub_spec.submodule_search_locations
    stub.__spec__ = stub_spec
    stub.__package__ = _PACKAGE

    def whole_package(name: str) -> Any:
        if sys.modules.get(_PACKAGE) is stub:  # still loading: a submodule not imported yet
            raise AttributeError(name)
        return getattr(importlib.import_module(_PACKAGE), name)

    stub.__getattr__ = whole_package  # type: ignore[method-assign]
    with lock_manager(_PACKAGE):
        if _PACKAGE in sys.modules:  # another thread imported it before we held the lock
            return sys.modules[_PACKAGE]
        sys.modules[_PACKAGE] = stub
        try:
            ufuncs = importlib.import_module(_PACKAGE + "._ufuncs")
        finally:
            if sys.modules.get(_PACKAGE) is stub:
                del sys.modules[_PACKAGE]
            if vars(scipy).get("special") is stub:  # (getattr would import it: scipy loads lazily)
                del scipy.special  # the real package sets it when it is imported
    return ufuncs
