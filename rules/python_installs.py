"""pip refused by the file system where it installs: an install into a Python whose site-packages the
user may not write (a system or shared interpreter), read from pip's own words
(knowledge/messages/pip.toml)."""

from __future__ import annotations

import re
from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "site-packages-not-writable"
_PACKAGE_DIRS = ("site-packages", "dist-packages")
_VENV_INSTALL = ("python3 -m venv \"$HOME/venvs/myenv\" && . \"$HOME/venvs/myenv/bin/activate\" && python3 -m pip "
                 "install PACKAGE")
_FIX = ("python3 -c 'import sys, sysconfig; print(sys.executable, sysconfig.get_paths()[\"purelib\"])'   # the "
        "interpreter pip installs for, and where\n"
        f"{_VENV_INSTALL}   # an environment of your own, which you can write (on a cluster, on a file system the "
        "compute nodes see)\n"
        "# or python3 -m pip install --user PACKAGE (into ~/.local); never sudo pip into the system or a shared "
        "Python: it changes what the operating system and other users run")


# A site's software tree (Bright's /cm/shared/apps, /opt/apps, /apps, /sw, /software): <name>/<version>/ per
# module. A site-packages below another program's version directory than the Python's own is that
# module's install (pip install --prefix into its tree), reached through the PYTHONPATH its modulefile sets.
_MODULE_TREE = re.compile(r"^/(?:cm/shared/apps|opt/apps|usr/local/apps|apps|sw|software|opt/ohpc/pub/apps)/"
                          r"(?P<name>[A-Za-z][\w.+-]{0,60})/(?P<version>\d[\w.+-]{0,40})/.{0,200}?/(?:site|dist)-packages/")
_PYTHONS = re.compile(r"(?i)^(?:python\d?|anaconda\d?|miniconda\d?|miniforge\d?|mambaforge|conda|intelpython\d?|pypy\d?)$")


def _module_tree(path: str):
    m = _MODULE_TREE.match(path)
    if m is None or _PYTHONS.match(m.group("name")):
        return None
    return m.group("name"), m.group("version")


@rule("SW126", SYMBOL, "error", "pip installs into a Python whose site-packages the user may not write", impact=5)
def site_packages_not_writable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, pip's "Could not install packages due to an OSError: [Errno 13]
        Permission denied: '<path>'" (pip 10 and later; its older "EnvironmentError" wording too)
        where the path is in the interpreter's site-packages or dist-packages, or names no path,
        and the traceback pip 9 and older printed, ending "OSError: [Errno 13] Permission denied:
        '.../site-packages/<package>'". A refused write elsewhere (a cache, TMPDIR) is not this.
        Where the path is a site-packages inside another program's module tree (a site's
        /cm/shared/apps/RSeQC/2.6.4/...), the loaded module's PYTHONPATH led pip there: unload it.

    Why it matters:
        pip installs into the site-packages of the interpreter that runs it. A system Python
        (/usr/lib/python3, macOS's /Library/Python), a site's shared Python module or a container
        image's Python belongs to root or to the administrators; the install stops, and
        installing there with sudo changes what the operating system and every other user run.

    How to fix:
        Install into an environment of your own (python3 -m venv, then pip inside it; conda create
        for a conda Python) or, for a few tools, pip install --user into ~/.local. On a cluster,
        put the environment on a file system the compute nodes see.

    References:
        - https://github.com/pypa/pip/blob/26.2.1/src/pip/_internal/commands/install.py (create_os_error_message)
        - https://packaging.python.org/en/latest/tutorials/installing-packages/#creating-virtual-environments
        - https://docs.python.org/3/library/venv.html
    """
    told = [s for s in catalogued(f, SYMBOL)
            if not s.get("path") or any(d in str(s.get("path")) for d in _PACKAGE_DIRS)]
    if not told:
        return
    s = told[0]
    path = s.get("path")
    module = _module_tree(str(path or ""))
    if module is not None:
        name, version = module
        yield Hit(message=f"pip tried to change a package in the {name}/{version} software module's own tree ({path}; "
                          f"line {s.get('line')}: \"{told_text(s)}\"): that module, loaded, puts its packages on "
                          "PYTHONPATH, so pip found a package there and tried to replace it, where only the "
                          "administrators may write",
                  fix=(f"echo \"$PYTHONPATH\"; module list   # the loaded modules and the package directories they add\n"
                       f"module unload {name}/{version}   # while installing (or module purge), then install again into "
                       f"your own environment: {_VENV_INSTALL}"),
                  evidence=told_evidence(s))
        return
    where = f" ({path})" if path else ""
    yield Hit(message=f"pip could not write into the interpreter's site-packages{where} (line {s.get('line')}: "
                      f"\"{told_text(s)}\"): it is installing into a Python the user may not change (the system's, "
                      "a shared module's or an image's)",
              fix=_FIX, evidence=told_evidence(s))
