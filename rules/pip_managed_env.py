"""pip refusing to install into a Python its distribution manages (PEP 668's EXTERNALLY-MANAGED
marker; knowledge/messages/pip.toml externally-managed-environment)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "pip-externally-managed"

_FIX = (
    "python3 -m venv ~/venvs/work && . ~/venvs/work/bin/activate   # an environment of your own "
    "(Debian/Ubuntu: needs the python3-venv package; on a cluster, module load python first)\n"
    "python -m pip install PACKAGE   # inside it: PACKAGE, what you were installing\n"
    "# or a conda environment; pipx install PACKAGE for a command-line tool. Not sudo pip, and "
    "--break-system-packages only in a throwaway container: it can break the system's own Python programs")


@rule("SW106", SYMBOL, "error", "pip refuses to install into the operating system's own Python", impact=5)
def pip_externally_managed(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        pip's "error: externally-managed-environment" ("This environment is externally managed"):
        the interpreter pip runs for carries the EXTERNALLY-MANAGED marker of PEP 668, which
        Debian 12, Ubuntu 23.04 and later, Fedora, Raspberry Pi OS and Homebrew put beside their
        system Python, so pip 23.0 and later refuse to install into it, --user installs too.

    Why it matters:
        The install did not happen, and what the user runs next fails on the missing package.
        On a login node or in an image built FROM ubuntu:24.04 the bare python3 is the
        distribution's, which its package manager alone may change: packages pip put there
        could break the distribution's own Python programs, which is why the marker exists.

    How to fix:
        Install into an environment of one's own: python3 -m venv (Debian and Ubuntu need the
        python3-venv package for it), a conda environment, or the site's Python module loaded
        first; pipx for command-line tools. --break-system-packages overrides the marker and is
        for throwaway containers only.

    References:
        - https://peps.python.org/pep-0668/
        - https://packaging.python.org/en/latest/specifications/externally-managed-environments/
        - https://github.com/pypa/pip/blob/23.0/src/pip/_internal/exceptions.py (ExternallyManagedEnvironment)
        - https://github.com/buxiaomo/kubeasy/issues/11
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    yield Hit(message=f"pip refused to install: the Python it runs for is the operating system's, marked "
                      f"EXTERNALLY-MANAGED (PEP 668), so nothing was installed (line {s.get('line')}: \"{told_text(s)}\")",
              fix=_FIX, evidence=told_evidence(s))
