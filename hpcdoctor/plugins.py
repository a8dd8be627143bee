"""Loading check and rule modules: the built-in packages and site plugin directories.

Built-ins are ordinary subpackages (``hpcdoctor.checks``, ``hpcdoctor.rules``), discovered by
listing their folder, so installs (wheel and editable alike) and type checkers see normal
modules. A site adds its own by dropping ``*.py`` files into ``/etc/hpcdoctor/<kind>.d/`` or into
``<dir>/<kind>/`` for each ``dir`` in ``HPCDOCTOR_PATH``; those are loaded by path with the same
discovery, so built-ins and site additions use one mechanism.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import pkgutil
import sys
from types import ModuleType
from typing import List, Tuple

SYSTEM_DIR = "/etc/hpcdoctor"


def site_dirs(kind: str) -> List[str]:
    dirs = [os.path.join(SYSTEM_DIR, f"{kind}.d")]
    for base in os.environ.get("HPCDOCTOR_PATH", "").split(os.pathsep):
        if base:
            dirs.append(os.path.join(base, kind))
    return [d for d in dirs if os.path.isdir(d)]


def builtin_modules(package: str) -> List[ModuleType]:
    return list(_builtin_modules(package))


@functools.lru_cache(maxsize=None)
def _builtin_modules(package: str) -> Tuple[ModuleType, ...]:
    # The package's own modules are fixed for the life of the process: listing its folder each time
    # cost 9 ms a check (pkgutil reads every file name), and a support session triages many pastes.
    pkg = importlib.import_module(package)
    names = sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_"))
    return tuple(importlib.import_module(f"{package}.{n}") for n in names)


class _NoBytecodeLoader(importlib.machinery.SourceFileLoader):
    """Compiles a site plugin from its source every time: /etc/hpcdoctor is read, never written
    (no ``__pycache__`` beside the plugins), and no stale or planted .pyc is ever run."""

    def get_code(self, fullname: str):  # type: ignore[override]
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)

    def set_data(self, path: str, data: bytes, *, _mode: int = 0o666) -> None:
        return None


def load_dir(directory: str, kind: str) -> Tuple[List[ModuleType], List[str]]:
    """Modules from one site directory, and one error line per file that failed to load."""
    mods, errors = [], []
    tag = hashlib.sha1(os.path.abspath(directory).encode()).hexdigest()[:8]
    for fname in sorted(os.listdir(directory)):
        if not fname.endswith(".py") or fname.startswith("_"):
            continue
        path = os.path.join(directory, fname)
        name = f"hpcdoctor_site_{kind}_{tag}_{fname[:-3]}"
        try:
            spec = importlib.util.spec_from_file_location(name, path, loader=_NoBytecodeLoader(name, path))
            if spec is None or spec.loader is None:
                raise ImportError("not a Python module")
            mod = importlib.util.module_from_spec(spec)
            sys.modules[name] = mod
            spec.loader.exec_module(mod)
        except Exception as exc:  # a broken site plugin must not take the tool down
            sys.modules.pop(name, None)
            errors.append(f"{path}: {exc.__class__.__name__}: {exc}")
            continue
        mods.append(mod)
    return mods, errors


def load(package: str, kind: str) -> Tuple[List[ModuleType], List[str]]:
    mods = builtin_modules(package)
    errors: List[str] = []
    for d in site_dirs(kind):
        more, errs = load_dir(d, kind)
        mods.extend(more)
        errors.extend(errs)
    return mods, errors
