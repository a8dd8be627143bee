"""A C extension, Triton's launcher or torch.compile's C++ build that needs Python's development
headers (Python.h) where the interpreter has none (knowledge/messages/build.toml, frameworks.toml)."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "python-headers-missing"
# A Python version a paste names with its headers: python3.11 (Inductor's include directory), python2.7/Python.h.
_VERSION = re.compile(r"python([23](?:\.[0-9]{1,2})?)")


def _version(s: dict) -> Optional[str]:
    m = _VERSION.search(str(s.get("pydir") or s.get("include_dir") or ""))
    return m.group(1) if m else None


def _devel(py: str) -> str:
    """RHEL's name for the headers' package: python3-devel, python3.11-devel (RHEL 9's versioned Pythons), python2-devel."""
    return "python3-devel" if py == "python3" else f"{py}-devel" if py.startswith("python3") else "python2-devel"


def _fix(version: Optional[str]) -> str:
    py = f"python{version}" if version and "." in version else "python3"
    return (f"{py} -c \"import sysconfig; print(sysconfig.get_paths()['include'])\"   # where this Python's headers "
            "belong; Python.h must be there\n"
            f"# the distribution's Python: sudo apt-get install {py}-dev (Debian, Ubuntu) or sudo dnf install "
            f"{_devel(py)} (RHEL family)\n"
            "# on a cluster, the site's Python module ships its headers (module load python); a conda environment's "
            "Python has them too: build with that Python, not the system's")


@rule("SW077", SYMBOL, "error", "Python's development headers (Python.h) are missing for the Python a build compiles against",
      impact=4)
def python_headers_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted build log, the C compiler's "fatal error: Python.h: No such file or
        directory" (also "python2.7/Python.h"), and torch.compile's "Can't find Python.h in
        <include directory>": a compile that includes Python's C API and finds no headers for
        the interpreter. The Python version is read from the path where the paste names one.

    Why it matters:
        Building any C extension from source (pip without a wheel for this platform), Triton's
        launcher and Inductor's C++ wrapper include Python.h. Distributions ship the headers apart
        from the interpreter (python3-dev, python3-devel), and minimal images and many nodes do not
        install them.

    How to fix:
        Install the headers of the same Python (python3.X-dev / python3X-devel), or build with a
        Python that ships them: the site's Python module or a conda environment's.

    References:
        - https://docs.python.org/3/extending/extending.html (Python.h, the C API header)
        - https://docs.python.org/3/library/sysconfig.html (get_paths()['include'])
        - https://packages.debian.org/bookworm/python3-dev
        - https://github.com/pytorch/pytorch/blob/main/torch/_inductor/cpp_builder.py ("Can't find Python.h in")
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    version = _version(s)
    which = f"Python {version}'s" if version else "the Python's"
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {which} development headers are not installed, so "
                      "nothing that compiles against Python's C API can build here",
              fix=_fix(version), evidence=told_evidence(s))
