"""Rootless containers whose user namespace could not get the user's subordinate IDs: shadow-utils'
newuidmap/newgidmap refused (no setuid bit or file capability, no /etc/subuid range, overlapping
ranges), read from the helpers' own words and podman's around them (knowledge/messages/idmap.toml).
Apptainer's wording of the same failure is apptainer-fakeroot-unavailable's."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "newuidmap-lacks-privilege"

# Each entry's own cause (shadow's lib/idmapping.c and src/newuidmap.c; podman's rootless_linux.go).
_WHY = {
    "idmap:could-not-set-caps": "it could not keep its capability: it runs without its setuid bit or file capability, "
                                "or under a bounding set that drops it (a service with NoNewPrivileges or an empty "
                                "CapabilityBoundingSet)",
    "idmap:could-not-seteuid": "the setuid-root helper could not drop back to the caller while keeping its capability",
    "idmap:range-not-allowed": "the mapping asks for IDs outside the user's /etc/subuid (or /etc/subgid) ranges: the "
                               "user has no range, or a smaller one",
    "idmap:podman-should-have-setuid-or-filecaps": "podman checked the helper: it has neither the setuid bit nor the "
                                                   "file capability",
    "idmap:podman-no-subuid-ranges": "the user has no /etc/subuid range, so only their own uid is mapped (files owned "
                                     "by other IDs in an image then fail)",
    "idmap:open-map-failed": "it could not even open the map file: usually a rootless engine inside another container "
                             "that does not pass its own ID ranges down",
}
_WRITE_WHY = {
    "Operation not permitted": "the kernel refused the multi-range map: the helper lacks its privilege (no setuid bit, "
                               "no cap_setuid/cap_setgid file capability, or it runs under NoNewPrivileges or a tracer)",
    "Invalid argument": "the kernel rejected the map itself: the /etc/subuid or /etc/subgid ranges overlap (a duplicated "
                        "line) or include the user's own id",
}
# Most specific first: podman's own check, then the helper's words that name the cause.
_ORDER = ("idmap:podman-should-have-setuid-or-filecaps", "idmap:could-not-set-caps", "idmap:range-not-allowed",
          "idmap:write-map-failed", "idmap:could-not-seteuid", "idmap:open-map-failed", "idmap:podman-no-subuid-ranges")

_FIX = (
    "ls -l /usr/bin/newuidmap /usr/bin/newgidmap; getcap /usr/bin/newuidmap /usr/bin/newgidmap   # setuid root (-rwsr-xr-x) or cap_setuid/cap_setgid\n"
    "grep \"^$(id -un):\" /etc/subuid /etc/subgid   # one range each, e.g. alice:100000:65536, no duplicate or overlapping lines\n"
    "sudo setcap cap_setuid+ep /usr/bin/newuidmap && sudo setcap cap_setgid+ep /usr/bin/newgidmap   "
    "# administrators (or: sudo chmod u+s on both, or reinstall shadow-utils / uidmap, which sets them)\n"
    "sudo usermod --add-subuids 100000-165535 --add-subgids 100000-165535 USER   # administrators: a range for a user who has none\n"
    "podman system migrate   # then restart podman's namespace so it picks the mapping up")


@rule("ENV081", SYMBOL, "error",
      "newuidmap/newgidmap could not map the user's subordinate IDs into a rootless container", impact=6,
      also={"warning": "podman's fallback to a single-ID namespace (no /etc/subuid range), or the map file not opened"})
def newuidmap_lacks_privilege(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, shadow-utils' ID-mapping helpers failing for a rootless container
        (podman, buildah, rootless Docker): "newuidmap: write to uid_map failed: Operation not
        permitted" (the helper lacks its setuid bit or file capability; with "Invalid argument",
        overlapping /etc/subuid ranges), "newuidmap: Could not set caps", "newuidmap: uid range
        [..) -> [..) not allowed" (no /etc/subuid range), podman's "cannot set up namespace using
        \"/usr/bin/newuidmap\": should have setuid or have filecaps setuid", and as warnings
        podman's "no subuid ranges found for user" (it falls back to a single-ID namespace) and
        "newuidmap: open of uid_map failed" (an engine nested in another container).

    Why it matters:
        A rootless engine maps the user's /etc/subuid and /etc/subgid ranges into the container
        through newuidmap and newgidmap, which need privilege to write more than the user's own
        id: the setuid bit or the cap_setuid/cap_setgid file capability. An install that dropped
        them (a package built without file capabilities, a copy in a home directory, a Spack or
        tarball build) leaves the engine with one mapped id: every image that owns files by other
        ids fails (chown: invalid argument, lchown errors), or nothing starts at all.

    How to fix:
        Check the helpers' mode and capabilities (ls -l, getcap) and the user's /etc/subuid and
        /etc/subgid lines; administrators set the capabilities (setcap) or the setuid bit
        (reinstall shadow-utils or uidmap) and add a range for the user; then podman system
        migrate.

    References:
        - https://github.com/shadow-maint/shadow/blob/816e02a2a98de1b4fa0424de8c751e93a69ee969/lib/idmapping.c (write_mapping)
        - https://github.com/shadow-maint/shadow/blob/816e02a2a98de1b4fa0424de8c751e93a69ee969/src/newuidmap.c (verify_ranges)
        - https://github.com/containers/podman/blob/main/pkg/rootless/rootless_linux.go (tryMappingTool)
        - https://github.com/containers/podman/blob/main/docs/tutorials/rootless_tutorial.md
        - https://man7.org/linux/man-pages/man7/user_namespaces.7.html (writing uid_map: CAP_SETUID in the parent namespace)
        - https://github.com/podman-container-tools/podman/issues/7106
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    said = min(told, key=lambda s: _ORDER.index(s.get("id")) if s.get("id") in _ORDER else len(_ORDER))
    sid = str(said.get("id"))
    helper = said.get("helper") or "newuidmap"
    if sid == "idmap:write-map-failed":
        error = str(said.get("error") or "")
        why = _WRITE_WHY.get(error, f"the kernel refused the write ({error or 'no reason given'})")
    else:
        why = _WHY.get(sid, "the ID-mapping helper failed")
    weak = sid in ("idmap:podman-no-subuid-ranges", "idmap:open-map-failed")
    yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": {helper} could not map the user's subordinate "
                      f"IDs into the rootless container's namespace: {why}",
              fix=_FIX, evidence=told_evidence(said), severity="warning" if weak else None)
