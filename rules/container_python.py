"""A container that runs the host's Python packages instead of its own: the user's site directory or
a conda environment in the home directory, which Apptainer mounts by default, or a PYTHONPATH passed
in from the host (ENV025)."""

from __future__ import annotations

import os
from typing import Iterator, List, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import told_evidence, told_text
from hpcdoctor.rules.gpu_access import _in_container

# Paths in the home directory a traceback or sys.path shows (knowledge/messages/python_site.toml).
_HOME_PATHS = ("python_site:user-site-path", "python_site:home-conda-path")
# Signs that the paste's program ran in an Apptainer/Singularity container, which mounts $HOME
# (container.toml's prompts and commands, faq_containers.toml's words).
_APPTAINER_SIGNS = ("container:apptainer-prompt", "container:singularity-prompt", "container:apptainer-command",
                    "container:singularity-command", "faq_containers:apptainer-run-without-nv-said",
                    "faq_containers:singularity-run-without-nv-said", "faq_containers:apptainer-container-said",
                    "faq_containers:singularity-container-said")

_APPTAINER_FIX = ("apptainer exec --env PYTHONNOUSERSITE=1 IMAGE python -c 'import site, sys; print(site.ENABLE_USER_SITE, "
                  "sys.path)'   # False, and no ~/.local: the user site is no longer searched (SINGULARITYENV_PYTHONNOUSERSITE=1 "
                  "before singularity exec on Singularity 2 and 3)\n"
                  "apptainer exec --cleanenv --no-home IMAGE ...   # the host's PYTHONPATH and conda variables, and the "
                  "home with its ~/.local and ~/.conda, stay outside (--containall for all of it)")
# CPython's fatal start-up error without its standard library, and the PYTHONHOME its dump shows.
_NO_STDLIB = "python_site:stdlib-not-found"
_PYTHONHOME_SAID = "python_site:path-configuration-pythonhome"
_PYTHONHOME_FIX = ("echo \"$PYTHONHOME\"   # set on the host (a module, a conda activation): Apptainer passes it into the container\n"
                   "apptainer exec --cleanenv IMAGE python3 -c 'import sys; print(sys.prefix)'   # the image's own Python "
                   "without the host's variables (or unset PYTHONHOME before apptainer exec)")
# A conda environment in the home is not the user site: keeping the home (and the host's variables
# that point into it) outside is the fix, PYTHONNOUSERSITE second.
_HOME_FIRST_FIX = "\n".join(reversed(_APPTAINER_FIX.split("\n")))
_DOCKER_FIX = ("docker run -e PYTHONNOUSERSITE=1 IMAGE ...   # the user site is no longer searched; or mount the "
               "data you need, not the whole home directory\n"
               "unset PYTHONPATH PYTHONHOME   # in the container's environment, where they came from the host")


def _under(path: str, roots: List[str]) -> Optional[str]:
    real = os.path.normpath(path)
    for root in roots:
        r = os.path.normpath(root)
        if r not in ("/", ".") and (real == r or real.startswith(r.rstrip("/") + "/")):
            return root
    return None


def _host_roots(f: FactView, home: bool) -> List[str]:
    """The places a container's imports come from the host: the user site, the PYTHONPATH entries
    passed in, and (``home``) the home directory, which Apptainer mounts."""
    roots = []
    site = f.get("torch.user_site") or {}
    if site.get("enabled") and site.get("path"):
        roots.append(str(site["path"]))
    env = f.get("env.vars") or {}
    roots.extend(p for p in str(env.get("PYTHONPATH") or "").split(":") if p)
    if home and env.get("HOME"):
        roots.append(str(env["HOME"]))
    return roots


def _live_pythonhome(f: FactView, place: str) -> Iterator[Hit]:
    """PYTHONHOME set inside the container, and the job's Python failing to start without its
    standard library (the torch probe's reason carries CPython's words)."""
    value = (f.get("env.vars") or {}).get("PYTHONHOME")
    why = f.reason("torch") if f.get("torch") is None else ""
    if value and isinstance(why, str) and ("encodings" in why or "init_fs_encoding" in why):
        yield Hit(message=f"PYTHONHOME={value} is set in this container and its Python cannot start: it looks for its "
                          f"standard library there ({why[:160]})",
                  fix=_PYTHONHOME_FIX if place == "apptainer" else "unset PYTHONHOME   # in the container's environment",
                  evidence={"env.vars.PYTHONHOME": value, "torch": why[:300]})


def _live(f: FactView, place: str) -> Iterator[Hit]:
    # A package in the home that hides the image's copy came from the host; torch alone in the home
    # may be a venv the user chose (--python), so only the user site or PYTHONPATH count for it.
    roots = _host_roots(f, home=True)
    if not roots:
        return
    shadows = [s for s in f.get("torch.shadowed") or []
               if isinstance(s.get("location"), str) and _under(s["location"], roots)
               and any(not _under(str(h.get("location")), roots) for h in s.get("hidden") or [])]
    torch_path = f.get("torch.path")
    torch_from = _under(str(torch_path), _host_roots(f, home=False)) if isinstance(torch_path, str) else None
    if not shadows and not torch_from:
        return
    parts = []
    for s in shadows[:4]:
        hidden = next(h for h in s["hidden"] if not _under(str(h.get("location")), roots))
        parts.append(f"{s['name']} {s.get('version')} from {s['location']} hides the container's "
                     f"{hidden.get('version')} in {hidden.get('location')}")
    if torch_from and not any(s["name"] == "torch" for s in shadows):
        parts.append(f"torch is imported from {torch_path}, under {torch_from}")
    # The same release on both sides (a PYTHONPATH copy of what the image has) runs the same code: what
    # the rule guards against, another version or a build for another Python, is not shown.
    same = not torch_from and all(
        str(s.get("version")) == str(next(h for h in s["hidden"] if not _under(str(h.get("location")), roots)).get("version"))
        for s in shadows)
    if same:
        yield Hit(message=f"this container's Python imports packages from outside the image, of the same versions as "
                          f"the image's: {'; '.join(parts)}; harmless as they are, but the image's own copies are not "
                          "the ones that run",
                  severity="info", fix=_APPTAINER_FIX if place == "apptainer" else _DOCKER_FIX,
                  evidence={"torch.shadowed": shadows[:4], "torch.user_site": f.get("torch.user_site")})
        return
    yield Hit(message=f"this container's Python imports the host's packages: {'; '.join(parts)}",
              fix=_APPTAINER_FIX if place == "apptainer" else _DOCKER_FIX,
              evidence={"torch.shadowed": shadows[:4], "torch.path": torch_path, "torch.user_site": f.get("torch.user_site")})


@rule("ENV025", "host-python-env-in-container", "error",
      "a container runs the host's Python packages (the home's ~/.local or conda, PYTHONPATH) instead of its own", impact=8,
      also={"info": "every copy from outside the image is the same version as the image's copy it hides"})
def host_python_env_in_container(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        On the node, inside a container: a package installed both in the image and in the user's
        site directory (~/.local/lib/pythonX.Y/site-packages), the home directory or a PYTHONPATH
        entry, whose host copy is the one imported; or torch imported from there (the torch probe
        reports where, and which copies sys.path hides). In a pasted ticket: a traceback frame or
        sys.path entry in ~/.local/lib/pythonX.Y/site-packages or a conda directory under the home
        (~/.conda), where the paste shows an Apptainer/Singularity container (its prompt, an
        apptainer or singularity exec/run/shell command, the user naming the container). A
        PYTHONHOME from the host: CPython's "Fatal Python error: init_fs_encoding" inside the
        container, or, on the node, PYTHONHOME set there and the job's Python failing to start.
        Copies from outside the image of the same versions as those they hide are an info (found
        live on a lent H200 whose image had prometheus-client 0.26.0 beside a PYTHONPATH copy of it).

    Why it matters:
        Apptainer and Singularity mount the host's home directory and pass the host's environment
        into the container by default, and Python searches the user site before the interpreter's
        own site-packages. Packages the user once installed with pip --user (or a PYTHONPATH set
        for the host) then replace the image's, built for another Python, CUDA or numpy: imports
        fail or the wrong versions run, on one user's account only.

    How to fix:
        Keep the user site out (PYTHONNOUSERSITE=1 passed into the container), or run with
        --cleanenv (no host PYTHONPATH) and --no-home or --containall (no host home).

    References:
        - https://docs.python.org/3/library/site.html (USER_SITE, ENABLE_USER_SITE, PYTHONNOUSERSITE)
        - https://github.com/apptainer/apptainer-userdocs/blob/94391c5b60ebfa8f0567fc5fd62cbe5ded9cc5ef/bind_paths_and_mounts.rst (the home mounted by default; --no-home)
        - https://github.com/apptainer/apptainer-userdocs/blob/94391c5b60ebfa8f0567fc5fd62cbe5ded9cc5ef/environment_and_metadata.rst (--cleanenv; PYTHONPATH)
        - https://github.com/aertslab/SCENICprotocol/issues/2 (scanpy imported from ~/.local inside Singularity)
    """
    place = _in_container(f)
    if place is not None:
        found = False
        for hit in list(_live_pythonhome(f, place)) or list(_live(f, place)):
            found = True
            yield hit
        if found:
            return
    told = f.get("ticket.symptoms") or []
    home = next((s for s in told if s.get("id") in _HOME_PATHS), None)
    sign = next((s for s in told if s.get("id") in _APPTAINER_SIGNS), None)
    stdlib = next((s for s in told if s.get("id") == _NO_STDLIB), None)
    if sign is not None and stdlib is not None:
        value = next((s.get("home") for s in told if s.get("id") == _PYTHONHOME_SAID and s.get("home")), None)
        said = f" (PYTHONHOME = '{value}')" if value else ""
        yield Hit(message=f"inside an Apptainer/Singularity container (line {sign.get('line')}), Python could not find its own "
                          f"standard library (line {stdlib.get('line')}): a PYTHONHOME passed in from the host{said} points the "
                          "image's Python at another installation",
                  fix=_PYTHONHOME_FIX, evidence=told_evidence(stdlib))
        return
    if home is None or sign is None:
        return
    what = ("the user's site directory (~/.local/lib/pythonX.Y/site-packages), which Python searches before the "
            "image's site-packages" if home["id"] == "python_site:user-site-path" else
            "a conda directory in the user's home (~/.conda)")
    yield Hit(message=f"inside an Apptainer/Singularity container (line {sign.get('line')}), Python loads packages from "
                      f"{what} (line {home.get('line')}: \"{told_text(home)}\"): the container mounts the host's home "
                      "by default, so the host's packages replace the image's",
              fix=_APPTAINER_FIX if home["id"] == "python_site:user-site-path" else _HOME_FIRST_FIX,
              evidence=told_evidence(home))
