"""Host paths a job needs that are not bound into its Apptainer or Singularity container: the
runtime's own words about a skipped or refused bind (knowledge/messages/container_binds.toml), and a
write to a site file system's path that lands on the image's read-only root instead; and the
runtime's default binds of /etc/localtime and /etc/hosts that the image cannot take
(knowledge/messages/apptainer_default_binds.toml)."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, ticket_symptoms, told_evidence, told_text

SYMBOL = "container-path-not-bound"
# The top-level directories of the Filesystem Hierarchy Standard 3.0: an image has them itself, and
# Apptainer binds $HOME and /tmp by default. Any other top level (/scratch, /project, /lustre, /appl,
# /gpfs) is a site's file system, present in a container only when bound.
_FHS = frozenset({"bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "media", "mnt", "opt",
                  "proc", "root", "run", "sbin", "srv", "sys", "tmp", "usr", "var"})
_EROFS_PATH = re.compile(r"\[Errno 30\] Read-only file system: '(?P<path>/[^'\n]{1,300})'")
_APPTAINER = ("container:apptainer-command", "container:apptainer-prompt", "faq_containers:apptainer-container-said")
_SINGULARITY = ("container:singularity-command", "container:singularity-prompt", "faq_containers:singularity-container-said")


def _runtime(f: FactView) -> Optional[str]:
    ids = ticket_symptoms(f).keys()
    if ids & set(_APPTAINER):
        return "apptainer"
    if ids & set(_SINGULARITY):
        return "singularity"
    return None


def _site_path(path: str) -> bool:
    top = path.strip("/").split("/", 1)[0]
    return bool(top) and top not in _FHS


def _read_only_site_write(f: FactView) -> Optional[dict]:
    """Python's EROFS on a site file system's path, in a paste that ran Apptainer or Singularity."""
    for s in f.get("ticket.symptoms") or []:
        if s.get("id") != "errno:EROFS":
            continue
        m = _EROFS_PATH.search(str(s.get("text", "")))
        if m and _site_path(m.group("path")):
            return dict(s, path=m.group("path"))
    return None


def _bind_of(path: str) -> str:
    """The directory to bind for a path: its first two levels (/scratch/project_1), the file system's usual unit."""
    parts = [p for p in path.split("/") if p][:2]
    return "/" + "/".join(parts) if parts else path


_WHAT = {
    "container_binds:bind-source-missing-skipped": "a bind's source {} does not exist on this node, so it is not in the container",
    "container_binds:singularity2-error-binding-path": "a bind's source {} does not exist on this node, so it is not in the container",
    "container_binds:singularity2-bind-path-source-missing": "a site 'bind path' source {} (singularity.conf) does not exist on "
                                                             "this node, so it is not in the container",
    "container_binds:user-bind-control-disabled": "the site's apptainer.conf forbids user binds ('user bind control = no'): {} is "
                                                  "not bound (only the site's 'bind path' entries are)",
    "container_binds:user-binds-forbidden": "the site's configuration forbids user binds ('user bind control = no'): the path {} is "
                                            "not bound (only the site's 'bind path' entries are)",
}


@rule("ENV052", SYMBOL, "error", "a host path the job uses is not bound into its Apptainer or Singularity container", impact=6,
      also={"warning": "a write to a site file system's path failed read-only inside the container: the image's root, not the file system"})
def container_path_not_bound(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, Apptainer or Singularity skipping or refusing a bind: "skipping mount
        of <src>: no such file or directory" (the source is not on this node), Singularity 2's
        "There was an error binding the path" and "Non existent 'bind path' source", "Ignoring
        <src> bind mount: user bind control disabled by system administrator" and its other
        wordings (a destination the image lacks is container-bind-target-missing's); and, as a
        warning, Python's "[Errno 30] Read-only file system: '<path>'" on a site file system's
        path (/scratch, /project, /lustre: not a directory of the FHS) in a paste that ran
        apptainer or singularity.

    Why it matters:
        Only the home directory, /tmp, /var/tmp, the working directory and a few system files are
        bound by default. A project or scratch file system that is not bound is absent inside
        the container: reads fail, and writes to its path land on the image's read-only root
        (or vanish in a writable overlay) instead of the file system.

    How to fix:
        Bind the host directory with --bind/-B (or APPTAINER_BIND / SINGULARITY_BIND for every
        container a job starts, or the site's bindings module), at the same path inside; check
        that the source exists on the node that runs the job.

    References:
        - https://apptainer.org/docs/user/latest/bind_paths_and_mounts.html
        - https://github.com/apptainer/apptainer/blob/main/internal/pkg/runtime/engine/apptainer/container_linux.go
        - https://refspecs.linuxfoundation.org/FHS_3.0/fhs/index.html
        - https://github.com/Lumi-supercomputer/LUMI-AI-Guide/issues/46
    """
    # a session directory's own mount point (the runtime's scratch) is not a host path the job asked for
    told = [s for s in catalogued(f, SYMBOL) if "/mnt/session/" not in str(s.get("path") or "")]
    runtime = _runtime(f)
    s = told[0] if told else (_read_only_site_write(f) if runtime else None)
    if not s:
        return
    cmd = runtime or "apptainer"
    path = str(s.get("path") or "")
    inferred = s.get("id") == "errno:EROFS"
    bind = (_bind_of(path) if inferred else path) or "/the/host/dir"
    what = (f"a write to {path} failed read-only inside the container: {bind} is not bound, so the path is the image's "
            f"read-only root, not the host's file system" if inferred
            else _WHAT.get(str(s.get("id")), "the host path {} is not bound into the container").format(path or "asked for"))
    env = "APPTAINER_BIND" if cmd == "apptainer" else "SINGULARITY_BIND"
    yield Hit(message=f"{what} (line {s.get('line')}: \"{told_text(s)}\")",
              fix=(f"ls -ld {bind}   # the host directory exists on this node\n"
                   f"{cmd} exec --bind {bind} IMAGE.sif ls -ld {bind}   # bound at the same path inside (-B src:dst for another)\n"
                   f"export {env}={bind}   # every container this shell or batch script starts"
                   f"{'; a site module may set it (LUMI: module load singularity-bindings)' if inferred else ''}"),
              evidence=told_evidence(s), severity="warning" if inferred else None)


LOCALTIME = "container-localtime-bind-fails"


@rule("ENV082", LOCALTIME, "error",
      "the runtime's default bind of the host's /etc/localtime (or /etc/hosts) does not fit the image", impact=5,
      also={"warning": "a newer runtime skipped the bind and ran on with the image's own file"})
def container_localtime_bind_fails(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, Apptainer or Singularity failing to bind the host's /etc/localtime (or
        /etc/hosts) onto the image's: Singularity 3.6's "FATAL: container creation failed: mount
        /etc/localtime->/etc/localtime error: while mounting /etc/localtime: could not mount
        /etc/localtime: not a directory" (an error: the container did not start), and the
        "WARNING: could not mount /etc/localtime: not a directory" of later releases, which skip
        the bind and run on (a warning: the container keeps the image's time zone).

    Why it matters:
        The runtime binds these host files into every container (apptainer.conf's "bind path"
        lines; with --contain too since Singularity 3.6). An image whose /etc/localtime is a
        directory, or a link to one (/usr/share/zoneinfo), cannot take a file bound onto it:
        the kernel refuses with ENOTDIR. Singularity 3.6.0 and 3.6.1 stopped there, whatever
        --contain or TZ said; the fix of apptainer/singularity#5465 made the two binds
        skip-on-error.

    How to fix:
        Skip that one bind (--no-mount /etc/localtime: Apptainer 1.1 and later; Singularity 3.7's
        --no-mount only takes the "mount xxx" options), upgrade the runtime, or rebuild the image with /etc/localtime as a file or a link to one
        zone file. Administrators may drop "bind path = /etc/localtime" from apptainer.conf.

    References:
        - https://github.com/apptainer/singularity/issues/5465
        - https://github.com/apptainer/apptainer/blob/917d66577963ca297352a22e13c86f1748ddc645/internal/pkg/runtime/engine/apptainer/container_linux.go (addBindsMount, skip-on-error)
        - https://apptainer.org/docs/user/latest/bind_paths_and_mounts.html (--no-mount)
        - https://github.com/apptainer/apptainer/commit/4672905d7 (--no-mount for 'bind path' entries, v1.1.0)
        - https://apptainer.org/docs/admin/latest/configfiles.html (bind path)
    """
    said = next(iter(catalogued(f, LOCALTIME)), None)
    if said is None:
        return
    source = said.get("source") or "/etc/localtime"
    error = said.get("error") or "the bind was refused"
    skipped = said.get("id") == "apptainer_default_binds:default-bind-skipped"
    cmd = _runtime(f) or "apptainer"
    outcome = ("the runtime skipped the bind and ran on: the container keeps the image's own " + source if skipped else
               "the container did not start")
    yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": the runtime binds the host's {source} into every "
                      f"container by default, and the image's {source} cannot take it ({error}: a directory, or a link to "
                      f"one, in the image); {outcome}",
              fix=(f"{cmd} exec IMAGE.sif ls -ld {source}   # in the image: a directory or a link to one (it must be a file)\n"
                   f"{cmd} run --no-mount {source} IMAGE.sif   # skip that one default bind (Apptainer 1.1 and later)\n"
                   f"{cmd} --version   # Singularity 3.6.0/3.6.1 make this fatal; later releases skip the bind with a warning\n"
                   "# or rebuild the image with /etc/localtime a file (ln -sf /usr/share/zoneinfo/UTC /etc/localtime); "
                   "administrators may drop \"bind path = /etc/localtime\" from apptainer.conf"),
              evidence=told_evidence(said), severity="warning" if skipped else None)


TARGET = "container-bind-target-missing"
# Where Singularity 2.x and the Go runtimes assemble the container: the in-container path follows it.
_CONTAINER_DIR = re.compile(r"^(?P<prefix>/[^\s]{0,300}?)?/var/(?:singularity|apptainer)/mnt/"
                            r"(?:final|container|overlay/final|session/final|session/rootfs|session/underlay/final)(?P<dest>/[^\s]{0,300})$")
# Site binds the image may well lack, harmless: the image keeps its own file (binds.c skips them quietly in effect).
_DEFAULT_FILES = frozenset({"/etc/localtime", "/etc/hosts", "/etc/resolv.conf"})
_USER_KEYS = frozenset({"singularity2-user-bind-point-missing", "singularity2-user-bind-point-create-failed",
                        "singularity2-scratch-target-missing"})
_SITE_KEYS = frozenset({"singularity2-bind-point-directory-missing", "singularity2-bind-point-file-missing",
                        "singularity2-hostfs-bind-point-missing", "singularity2-bind-point-create-failed"})
_FATAL_KEYS = frozenset({"singularity2-target-missing", "bind-destination-missing-fatal", "singularity2-home-base-missing"})


def _dest_of(s: dict) -> tuple[str, str]:
    """(the path inside the container, the runtime's installation prefix or '') of a symptom."""
    path = str(s.get("path") or s.get("target") or "")
    m = _CONTAINER_DIR.match(path)
    if m:
        return m.group("dest"), m.group("prefix") or ""
    return path, ""


def _asked_for(f: FactView, dest: str) -> bool:
    """Whether the pasted command line binds something at ``dest`` itself (-B/--bind src:dest or dest)."""
    for s in f.get("ticket.symptoms") or []:
        if s.get("id") in _APPTAINER + _SINGULARITY:
            cmd = str(s.get("command") or s.get("text") or "")
            for m in re.finditer(r"(?:-B|--bind)[ =]{1,3}([^\s]{1,400})", cmd):
                for spec in m.group(1).split(","):
                    parts = spec.split(":")
                    if dest in (parts[1] if len(parts) > 1 else parts[0],):
                        return True
    return False


@rule("ENV138", TARGET, "error", "a bind's destination does not exist in the container image and the runtime cannot create it",
      impact=6, also={"warning": "the runtime skipped the bind and ran on without the path"})
def container_bind_target_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, Singularity or Apptainer saying that a bind's destination is not in the
        image and nothing can create it. Singularity 2.x: "ERROR : Target <dir>/mnt/final/<path>
        doesn't exist" (2.4.6 aborts), "Non existent bind point (directory) in container" and
        "(file)" (a site 'bind path'), "Non existent 'bind point' directory in container"
        ('mount hostfs'), "Skipping user bind, non existent bind point" (the user's -B),
        "Could not create bind point ...", "Skipping scratch directory mount, target directory
        does not exist", "Base home directory does not exist within the container".
        SingularityCE 3.x/4.x and Apptainer: "Skipping mount <src> [binds]: <dst> doesn't exist
        in container" (skipped: a site bind, host file system, cwd), "destination <dst> doesn't
        exist in container" (fatal: a user bind, --home, --scratch) and the warning before it,
        "By using --writable (or: No layer in use), ... can't create <dst> destination
        automatically without overlay or underlay". The site's default /etc/localtime and
        /etc/hosts file binds are left out: the image keeps its own file.

    Why it matters:
        A bind needs a mount point inside the image. Singularity 2.x creates one only on an
        overlayfs ('enable overlay', when the kernel has it; 2.x has no underlay); Singularity
        3.x and Apptainer create one with an underlay or overlay, unless both are off, the image
        is --writable, or the tag is fatal. Otherwise the bind is skipped (the job then finds
        the path missing or writes into the image) or the container does not start at all
        (2.4.6 aborts on a site bind such as /data; 2.5 skips it).

    How to fix:
        Bind the host directory at a path the image has (-B /data:/mnt/data), create the
        directory in the image (%post mkdir -p <dir>, or a sandbox), or run a newer
        Singularity/Apptainer, which makes the mount point with an underlay. An administrator
        can enable overlay or underlay in singularity.conf/apptainer.conf, or drop the site's
        'bind path' (or 'mount hostfs') that the images lack.

    References:
        - https://github.com/apptainer/singularity/blob/2.4.6/src/util/mount.c (singularity_mount: Target %s doesn't exist)
        - https://github.com/apptainer/singularity/blob/2.6.1/src/lib/runtime/mounts/binds/binds.c
        - https://github.com/apptainer/singularity/blob/2.6.1/src/lib/runtime/mounts/userbinds/userbinds.c
        - https://github.com/apptainer/apptainer/blob/v1.5.3/internal/pkg/runtime/engine/apptainer/container_linux.go (mountGeneric)
        - https://apptainer.org/docs/user/latest/bind_paths_and_mounts.html
        - https://apptainer.org/docs/admin/latest/configfiles.html (enable overlay, enable underlay, bind path)
        - https://github.com/apptainer/singularity/issues/1540
    """
    said = []
    for s in catalogued(f, TARGET):
        dest, prefix = _dest_of(s)
        if s.get("id") == "container_binds:singularity2-bind-point-file-missing" and dest in _DEFAULT_FILES:
            continue
        if "/mnt/session/" in dest or not dest.startswith("/"):
            continue
        said.append((s, dest, prefix))
    if not said:
        return
    # the fatal line says the most; the --writable/no-layer warning names the same path as the fatal line
    s, dest, prefix = next((x for x in said if str(x[0].get("id")).split(":", 1)[1] in _FATAL_KEYS), said[0])
    key = str(s.get("id")).split(":", 1)[1]
    fatal = key in _FATAL_KEYS
    tag = str(s.get("tag") or "")
    runtime = _runtime(f)
    v2 = key.startswith("singularity2-")
    cmd = runtime or ("singularity" if v2 else "apptainer")
    if key in _USER_KEYS or _asked_for(f, dest):
        whose = "your own bind (-B/--bind, SINGULARITY_BINDPATH/APPTAINER_BIND, --scratch)"
    elif key in _SITE_KEYS or tag in ("binds", "hostfs"):
        whose = ("the site's bind ('mount hostfs = yes' in singularity.conf: a host file system)" if "hostfs" in (key + tag)
                 else "the site's bind ('bind path' in singularity.conf/apptainer.conf)")
    elif key == "singularity2-home-base-missing":
        whose = "the home directory's parent, which Singularity binds by default"
    elif key == "singularity2-target-missing":
        whose = ("a site bind ('bind path' or 'mount hostfs' in singularity.conf, a host file system such as /data): "
                 "the command line binds nothing there")
    elif tag:
        whose = f"a bind of the runtime's own [{tag}]"
    else:
        whose = "a bind asked for (-B/--bind, APPTAINER_BIND, --home, --scratch) or the site's"
    writable = any("--writable" in str(x[0].get("text", "")) for x in said)
    outcome = ("the container did not start" if fatal else
               "the runtime skipped it and ran on: the path is absent (or the image's own) inside the container")
    why = ("--writable leaves no overlay or underlay to create it" if writable else
           "Singularity 2.x creates a mount point only with overlayfs on" if v2 else
           "neither an overlay nor an underlay could create it")
    if v2:
        conf = (f"{prefix}/etc/singularity/singularity.conf" if prefix else "/etc/singularity/singularity.conf")
        admin = (f"grep -E '^(enable overlay|mount hostfs|bind path)' {conf}   # administrators: 'enable overlay = try' "
                 f"(a kernel with overlayfs), or drop the 'bind path'/'mount hostfs' the images lack")
        upgrade = (f"{cmd} --version   # 2.4.6 aborts on a missing target (2.5 skips it); Singularity 3.x and Apptainer "
                   f"create it with an underlay")
        image = "IMAGE.simg"
    else:
        conf = f"$({cmd} buildcfg SYSCONFDIR)/{cmd}/{cmd}.conf"
        admin = (f"grep -E '^(enable overlay|enable underlay|bind path|mount hostfs)' {conf}   # administrators: "
                 f"'enable underlay = yes' (or overlay), or drop the 'bind path' the images lack")
        upgrade = f"{cmd} --version   # Apptainer 1.x and SingularityCE 3.x+ create a missing mount point with an underlay or overlay"
        image = "IMAGE.sif"
    top = "/" + dest.strip("/").split("/", 1)[0] if dest.strip("/") else dest
    fix = (f"{cmd} exec {image} ls -ld {dest}   # not in the image\n"
           f"{cmd} exec -B {dest}:/mnt{dest} {image} ls /mnt{dest}   # bind the host directory under a path the image has\n"
           f"{cmd} build --sandbox image_dir {image} && mkdir -p image_dir{top} && {cmd} exec -B {dest} image_dir ls {dest}"
           f"   # or make the mount point in a sandbox (in a definition file: %post mkdir -p {top})\n"
           f"{upgrade}\n"
           f"{admin}")
    if writable:
        fix = fix.replace(f"{cmd} exec {image} ls -ld {dest}   # not in the image\n",
                          f"{cmd} exec {image} ls -ld {dest}   # not in the image; without --writable an overlay or underlay "
                          f"creates it\n")
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {dest} is the destination of {whose}, and it does not "
                      f"exist in the image ({why}); {outcome}",
              fix=fix, evidence=dict(told_evidence(s), destination=dest), severity=None if fatal else "warning")
