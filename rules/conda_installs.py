"""conda refusing to write where it installs: a shared installation (another user's or the site's
Miniconda, its pkgs/ cache and envs/) that the user cannot write, and the user's own ~/.conda whose
setgid chmod an NFS home refuses (knowledge/messages/conda.toml: NotWritableError with its path,
NoWritablePkgsDirError, NoWritableEnvsDirError, EnvironmentNotWritableError)."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SHARED = "shared-conda-install-not-writable"
SETGID = "nfs-refuses-setgid-chmod"
_NOT_WRITABLE = "conda:not-writable-path"
_SAID_SETGID = "prose:setgid-chmod-on-dot-conda-refused"
# a path inside the user's own conda directory (~/.conda), which conda makes and chmods 02775
_OWN_DOT_CONDA = re.compile(r"^(?:~|/home\d{0,3}/[^/]{1,64}|/Users/[^/]{1,64}|/root)/\.conda(?:/|$)")
# the installation a path belongs to: what comes before its pkgs/ or envs/ directory
_INSTALL = re.compile(r"^(?P<root>/[^\s]{1,250}?)/(?P<dir>pkgs|envs)(?:/|$)")
# an installation inside a home directory may be the user's own (with wrong ownership) or another
# user's: the path alone cannot tell, so it is said, not concluded
_IN_A_HOME = re.compile(r"^(?:~|/home\d{0,3}|/Users|/u|/users)/")

_OWN_DIRS = ("conda config --add pkgs_dirs ~/.conda/pkgs   # a package cache of your own, searched first\n"
             "conda config --add envs_dirs ~/.conda/envs   # environments of your own (conda create -n NAME goes there)\n"
             "conda config --show pkgs_dirs envs_dirs   # check: your own directories come first")


def _shared_install(s: dict) -> Optional[str]:
    """The installation root of a NotWritableError's path that is not the user's own ~/.conda."""
    path = str(s.get("path") or "")
    if not path or _OWN_DOT_CONDA.search(path):
        return None
    m = _INSTALL.search(path)
    return m.group("root") if m else None


@rule("SYS049", SHARED, "error", "conda cannot write the shared installation it was asked to install into", impact=5,
      also={"warning": "conda's NoWritablePkgsDirError, NoWritableEnvsDirError or EnvironmentNotWritableError, "
                       "which name no path",
            "info": "a NotWritableError in an installation inside a home directory: another user's, or the user's own "
                    "with files owned by someone else"})
def shared_conda_install_not_writable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, conda's NotWritableError whose path is in the pkgs/ or envs/ directory of
        an installation outside the user's own ~/.conda (a group's Miniconda on scratch, the site's
        /opt/anaconda3): an error, the path and the uid conda ran as are quoted; an installation
        inside a home directory (/home/NAME/miniconda3) may be the user's own with files owned by
        someone else, so that is info. conda's
        "No writeable pkgs directories configured.", "No writeable envs directories configured."
        and EnvironmentNotWritableError name no path: a warning.

    Why it matters:
        A conda installation belongs to whoever installed it: its package cache (pkgs/) and its
        environments (envs/) are written by every install. Other users of a shared Miniconda can
        run what is in it but cannot install, and sudo chown, which conda suggests, is not theirs
        to run on a cluster.

    How to fix:
        Keep using the shared installation, with a package cache and environments directory of
        your own (pkgs_dirs, envs_dirs in ~/.condarc), or create environments by path (conda create
        -p); or install your own Miniconda in your home or project space.

    References:
        - https://docs.conda.io/projects/conda/en/latest/user-guide/configuration/settings.html (pkgs_dirs, envs_dirs)
        - https://docs.conda.io/projects/conda/en/latest/user-guide/configuration/admin-multi-user-install.html (multi-user installation: users' own envs and pkgs)
        - https://github.com/conda/conda/blob/main/conda/exceptions.py (NotWritableError, NoWritablePkgsDirError, NoWritableEnvsDirError)
    """
    told = catalogued(f, SHARED)
    named = next((s for s in told if s.get("id") == _NOT_WRITABLE and _shared_install(s)), None)
    if named is not None:
        root = str(_shared_install(named))
        uid = f" (uid {named['uid']})" if named.get("uid") else ""
        if _IN_A_HOME.search(root):
            yield Hit(message=f"conda cannot write {named.get('path')}{uid}, in the installation at {root} inside a home "
                              f"directory (line {named.get('line')}: \"{told_text(named)}\"): another user's installation, "
                              "or yours with files owned by someone else (a past sudo conda)",
                      fix=f"ls -ld {root} {root}/pkgs   # whose installation it is\n" + _OWN_DIRS,
                      evidence=told_evidence(named), severity="info")
            return
        yield Hit(message=f"conda cannot write {named.get('path')}{uid}, in the package cache or environments of the "
                          f"installation at {root}, which is not yours (line {named.get('line')}: \"{told_text(named)}\"): "
                          "install into directories of your own rather than asking for sudo chown",
                  fix=_OWN_DIRS + f"\n# or an environment by path, outside {root}: conda create -p ~/envs/NAME PACKAGES",
                  evidence=told_evidence(named))
        return
    unnamed = next((s for s in told if s.get("id") != _NOT_WRITABLE), None)
    if unnamed is not None:
        yield Hit(message=f"conda has no package cache or environments directory it can write (line {unnamed.get('line')}: "
                          f"\"{told_text(unnamed)}\"): the installation is someone else's or read-only",
                  fix=_OWN_DIRS, evidence=told_evidence(unnamed), severity="warning")


@rule("SYS050", SETGID, "warning", "the home file system refuses the setgid chmod conda makes on ~/.conda", impact=4,
      also={"info": "NotWritableError naming the user's own ~/.conda, without the refused chmod said: a ~/.conda owned "
                    "by root (after sudo conda) is as likely"})
def nfs_refuses_setgid_chmod(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, conda's NotWritableError together with the user's own finding that the
        chmod setting the setgid bit on ~/.conda (chmod 02755/02775) is refused: a warning. A
        NotWritableError naming a path in the user's own ~/.conda alone: info.

    Why it matters:
        conda creates ~/.conda and its pkgs/ and envs/ with mkdir and then chmods each to 02775
        (setgid, so that a shared directory's group is inherited). Some NFS servers (Isilon) refuse
        a user's chmod setting setgid; conda releases that raised NotWritableError on that failure
        stop there, in a home directory the user can write.

    How to fix:
        Make the directories yourself before conda does (it does not chmod what exists), and use a
        current conda, which logs a failed chmod and goes on.

    References:
        - https://github.com/conda/conda/issues/8335 (NotWritableError when the NFS home refuses chmod 02755 .conda)
        - https://github.com/conda/conda/blob/main/conda/gateways/disk/__init__.py (mkdir_p_sudo_safe: chmod 0o2775, a failure logged)
    """
    told = catalogued(f, SETGID)
    error = next((s for s in told if s.get("id") == _NOT_WRITABLE), None)
    if error is None:
        return
    said = next((s for s in told if s.get("id") == _SAID_SETGID), None)
    fix = ("mkdir -p ~/.conda/pkgs ~/.conda/envs   # made by you: conda does not chmod directories that exist\n"
           "conda update -n base conda   # current conda logs a refused chmod 02775 and goes on")
    if said is not None:
        yield Hit(message=f"conda's NotWritableError (line {error.get('line')}: \"{told_text(error)}\") with the refused "
                          f"setgid chmod on ~/.conda said (line {said.get('line')}: \"{str(said.get('matched') or told_text(said))[:120]}\"): the home "
                          "file system refuses the chmod 02775 conda makes on the directories it creates",
                  fix=fix, evidence=told_evidence(said))
        return
    path = str(error.get("path") or "")
    if _OWN_DOT_CONDA.search(path):
        yield Hit(message=f"conda cannot write {path} in your own ~/.conda (line {error.get('line')}: \"{told_text(error)}\"): "
                          "~/.conda owned by root after a sudo conda, or a home file system that refuses conda's setgid chmod",
                  fix="ls -ld ~/.conda ~/.conda/*   # whose it is, and whether the s bit took\n" + fix,
                  evidence=told_evidence(error), severity="info")
