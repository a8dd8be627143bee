"""A licensed program that cannot check out its license: FlexNet Publisher's (FLEXlm's) error codes as
MATLAB and other FlexNet clients print them (knowledge/messages/flexlm.toml): the license server down
or unreachable, or a node-locked license whose hostid is not this node's or that another user holds."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SERVER = "license-server-unreachable"
NODE_LOCKED = "license-node-locked-in-use"

# Each code's cause as FlexNet explains it (flexlm.toml's means: the FLEXnet error table's explanation
# of -15, the SDK's lm_lerr.h for -96 and -97): -15 and -96 name a wrong port@host as often as a server down.
_WHAT = {
    15: ("the client could not connect to the license server (-15, LM_CANTCONNECT)",
         "lmgrd is not started there, or the license path names the wrong port@host or license file"),
    96: ("the license server host is down or not responding (-96, LM_HOSTDOWN)",
         "the license server is not started there, or the license path names the wrong host"),
    97: ("the license server's vendor daemon is down (-97, LM_VENDOR_DOWN)",
         "lmgrd answers but the product's vendor daemon does not run: the lmgrd log says why"),
}


@rule("SYS031", SERVER, "error", "the license server cannot be reached: the licensed program cannot start", impact=5)
def license_server_unreachable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a paste, a FlexNet (FLEXlm) checkout that failed because the license server did not
        answer: code -15 "Cannot connect to license server system", -96 "License server machine is
        down or not responding", -97 "The desired vendor daemon is down", as MATLAB prints them
        ("License Manager Error -15", "Licensing error: -15,570.") and as FlexNet's own formats do
        ("FLEXnet Licensing error:-96,7", "(-96,7:2 ...)").

    Why it matters:
        Every node that runs the program needs its license server: when lmgrd or the vendor daemon
        is down (after a reboot or power cut, with no service to restart it), when the license path
        names the wrong port@host (FlexNet's own explanation of -15 and -96), or when a firewall or
        the network keeps the node from its port, every job that starts the program fails at once.

    How to fix:
        Check the license path and the server from the node (lmutil lmstat -a -c PORT@HOST, with
        the license path the message shows); the site restarts lmgrd (and makes it start at boot),
        restarts a vendor daemon that is down alone (lmreread, after reading the lmgrd log), or
        opens the ports (lmgrd's and the vendor daemon's, both fixed on the SERVER and VENDOR lines).

    References:
        - https://www.mathworks.com/support/lme/15
        - https://www.mathworks.com/support/lme/96
        - https://docs.revenera.com/fnp/2024r1/LicAdmin_Guide/Content/helplibrary/Error_Code_Descriptions.htm (FlexNet Publisher License Administration Guide: error code descriptions)
        - https://docs.techsoft3d.com/spinfire/insight/setting_up_spinfire/floating_license_manager/floating_license_error_codes.html (the FLEXnet error table with its explanations: -15)
        - https://github.com/TIGRLab/admin/issues/188
    """
    told = catalogued(f, SERVER)
    if not told:
        return
    s = told[0]
    what, why = _WHAT.get(s.get("code"), ("the license server did not answer",
                                           "the site's license service is down or this node cannot reach it"))
    yield Hit(message=f"the license checkout failed because {what} (line {s.get('line')}: \"{told_text(s)}\"): {why}",
              fix=("echo \"$LM_LICENSE_FILE\" \"$MLM_LICENSE_FILE\"   # the license path: PORT@HOST entries name the server\n"
                   "lmutil lmstat -a -c PORT@HOST   # from this node: is lmgrd up, and its vendor daemon (MATLAB: MLM)?\n"
                   "nc -zv HOST PORT   # the port is reachable from this node (a firewall closes it otherwise)\n"
                   "# administrators: start lmgrd on the server (MATLAB: etc/lmstart) and make it start at boot;\n"
                   "# a vendor daemon down alone (-97): read the lmgrd log, then lmutil lmreread -c PORT@HOST restarts it"),
              evidence=told_evidence(s))


@rule("SYS032", NODE_LOCKED, "warning",
      "the license is locked to another host, or a node-locked (Designated Computer) license is in use by another user",
      impact=4)
def license_node_locked_in_use(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a paste, FlexNet code -9 (LM_NOTTHISHOST, "Invalid host"), as MATLAB prints it: "License
        Manager Error -9", "Licensing error: -9,57.". MATLAB explains it as "The hostid of this
        computer does not match the hostid in the license file" or "A Designated Computer
        installation is in use by another user". A warning: the code names two causes.

    Why it matters:
        A node-locked license (MATLAB's Individual or Designated Computer licenses) is bound to one
        host's hostid and, for Designated Computer, to one user at a time: on a cluster, a job on
        another node than the licensed one always fails, and two users on the licensed node fail
        intermittently, when the other holds it.

    How to fix:
        Compare this node's hostid (lmutil lmhostid) with the license file's; run on the node the
        license names, one user at a time, or ask the site for a network (concurrent) license
        served by lmgrd, which any node can check out.

    References:
        - https://www.mathworks.com/support/lme/9
        - https://docs.revenera.com/fnp/2024r1/LicAdmin_Guide/Content/helplibrary/Error_Code_Descriptions.htm (FlexNet Publisher License Administration Guide: error code descriptions)
        - https://github.com/cBio/cbio-cluster/issues/339
    """
    told = catalogued(f, NODE_LOCKED)
    if not told:
        return
    s = told[0]
    yield Hit(message=f"the license checkout failed with FlexNet code -9 (line {s.get('line')}: \"{told_text(s)}\"): the "
                      "license is bound to another host's hostid (a user-based license: to another user name), or (a "
                      "node-locked Designated Computer license) another user is running the program on this node",
              fix=("lmutil lmhostid   # this node's hostid: the license file's HOSTID= must name it\n"
                   "grep -h HOSTID= LICENSE_FILE   # each file of the message's \"License path:\": the hostid the license is locked to\n"
                   "ps -eo user,comm | grep -i matlab   # another user's MATLAB on this node holds a Designated Computer license\n"
                   "# on a cluster: use a network (concurrent) license served by lmgrd, which every node can check out"),
              evidence=told_evidence(s))


SEATS = "license-seats-exhausted"
# Each code's cause as the SDK's table states it (flexlm.toml): all a transient state of the pool,
# except -87 (the site's options file caps this user or group) and -101 (seats reserved for others).
_SEATS = {
    4: "every seat of the feature is checked out (-4, LM_MAXUSERS: \"Licensed number of users already reached\")",
    24: "users are already queued for the feature's seats (-24, LM_USERSQUEUED)",
    35: "the checkout is queued for a seat of the feature (-35, LM_FEATQUEUE)",
    87: "the site's options file caps how many seats this user or group may hold, and they are in use (-87, LM_MAXLIMIT)",
    101: "the free seats are reserved for other users or hosts by the site's options file (-101, LM_RESVFOROTHERS)",
}


def _license_path(f: FactView) -> tuple:
    """(feature, first entry of the license path) from the long format's lines, where pasted."""
    for s in f.get("ticket.symptoms") or []:
        if isinstance(s, dict) and s.get("id") == "flexlm_path:license-path" and s.get("path"):
            first = str(s["path"]).split(":")[0] if not str(s["path"]).startswith("@") else str(s["path"])
            return s.get("feature"), first or None
    return None, None


@rule("SYS041", SEATS, "warning",
      "every license seat the job may take is in use: the checkout is refused until one is returned", impact=4)
def license_seats_exhausted(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a paste, a FlexNet (FLEXlm) checkout refused because no seat was free: code -4
        "Licensed number of users already reached." (COMSOL's "License error: -4." block ending
        "FlexNet Licensing error:-4,132", MATLAB's "License Manager Error -4"), -24 "Users are
        queued for this feature.", -35 "In the queue for this feature.", -87 "Checkout exceeds MAX
        specified in options file.", -101 "All licenses are reserved for others.". The number after
        the comma (132) is FlexNet's minor code, a location for the vendor's support, not a cause.

    Why it matters:
        A floating license has a fixed number of seats for the whole site: when other users' jobs
        and desktops hold them all, every new job that starts the program fails at once, on any
        node, and the same job succeeds later. A warning: a state of the pool, not a fault of the
        node (-87 and -101 are the site's own limits: a cap on this user's group, or seats reserved).

    How to fix:
        See who holds the seats (lmutil lmstat -a -c with the message's license path, or -f
        FEATURE), retry when one is free, or let the scheduler hold the job until a seat is: Slurm
        counts site licenses with sbatch -L NAME:1 (scontrol show licenses lists them), where the
        site has configured them.

    References:
        - https://docs.revenera.com/fnp/2024r1/LicAdmin_Guide/Content/helplibrary/Error_Code_Descriptions.htm (FlexNet Publisher License Administration Guide: error code descriptions)
        - https://docs.techsoft3d.com/spinfire/insight/setting_up_spinfire/floating_license_manager/floating_license_error_codes.html (the FLEXnet error table: -4)
        - https://slurm.schedmd.com/licenses.html (Slurm's license management: sbatch -L)
        - https://github.com/UCL-ARC/rcps-buildscripts/issues/193
    """
    told = catalogued(f, SEATS)
    if not told:
        return
    s = told[0]
    what = _SEATS.get(s.get("code"), "no seat of the license was free")
    minor = f" (minor code {s['minor']}: FlexNet's internal location, for the vendor's support)" if s.get("minor") else ""
    feature, path = _license_path(f)
    what_part = f"-f {feature}" if feature else "-a"   # one feature's users, or every feature's
    where = path or "PORT@HOST"
    yield Hit(message=f"the license checkout was refused: {what}{minor} (line {s.get('line')}: \"{told_text(s)}\"); "
                      "a state of the site's license pool, not of this node: the same job runs when a seat is free",
              fix=(f"lmutil lmstat -c {where} {what_part}   # who holds the seats now (\"Users of FEATURE: Total of N "
                   "licenses issued; Total of N licenses in use\")\n"
                   "scontrol show licenses   # Slurm: the licenses the site counts; then sbatch -L NAME:1 job.sh holds "
                   "the job until a seat is free\n"
                   "# or retry later; -87 and -101 are the site's options file (a cap on your group, seats reserved): "
                   "ask the license administrators"),
              evidence={**told_evidence(s), **({"license_path": path} if path else {})})


TOO_OLD = "license-too-old-for-release"
# Each code as the FlexNet SDK's table words it (flexlm.toml): the license file, the server or the vendor
# daemon is older than the release of the program that asks for the license.
_TOO_OLD = {
    21: "the license file does not cover this version of the program (-21, LM_OLDVER)",
    25: "the license server does not serve this version of the feature (-25, LM_SERVLONGGONE)",
    83: "the license server's vendor daemon is older than the program (-83, LM_SERVOLDVER)",
    114: "the license file lacks the SIGN= signatures this release requires: a file issued for older releases (-114, LM_SIGN_REQ)",
}


@rule("SYS063", TOO_OLD, "error",
      "the license file or license server is older than the program's release: no checkout until it is updated", impact=5)
def license_too_old_for_release(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a paste, a FlexNet (FLEXlm) checkout refused because the license is older than the
        program: -21 "License file does not support this version.", -25 "License server system
        does not support this version of this feature.", -83 "Version of vendor daemon is too
        old.", -114 "SIGN= keyword required but missing from the license certificate." (MATLAB's
        "License Manager Error -114": "This release requires a network license manager update and a
        new license file").

    Why it matters:
        A newer release of the program (a new MATLAB in a container, a new compiler module) asks the
        site's license for a version the license file was not issued for, or speaks a newer protocol
        than the server's lmgrd or vendor daemon: every checkout of that release fails, while the
        older release the license covers still runs.

    How to fix:
        Run the release the license covers, or have the license administrators install a license
        file issued for this release and update the license manager (lmgrd and the vendor daemon)
        to the version the release requires.

    References:
        - https://www.mathworks.com/support/lme/114
        - https://docs.revenera.com/fnp/2024r1/LicAdmin_Guide/Content/helplibrary/Error_Code_Descriptions.htm (FlexNet Publisher License Administration Guide: error code descriptions)
        - https://github.com/mathworks-ref-arch/matlab-integration-for-jupyter/issues/12
    """
    told = catalogued(f, TOO_OLD)
    if not told:
        return
    s = told[0]
    what = _TOO_OLD.get(s.get("code"), "the license is older than the program's release")
    _feature, path = _license_path(f)
    yield Hit(message=f"the license checkout was refused: {what} (line {s.get('line')}: \"{told_text(s)}\"); this "
                      "release needs a newer license file or license manager than the site's",
              fix=(f"lmutil lmstat -a -c {path or 'PORT@HOST'}   # the license server's lmgrd and vendor daemon "
                   "versions, and the features and versions its license file holds\n"
                   "# run the release the license covers (module load the older version, or that container tag), or "
                   "ask the license administrators for a license file issued for this release and a license manager "
                   "updated to it (MathWorks: from the License Center)"),
              evidence={**told_evidence(s), **({"license_path": path} if path else {})})
