"""Parallel pools whose processes cannot open the ports they listen on: MATLAB's parpool
(knowledge/messages/matlab.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "parallel-pool-ports-blocked"
_WHY = {
    "cannot assign requested address": "the address it binds is on no interface of this machine (::1 with IPv6 turned "
                                       "off on the loopback, or a host name that resolves to another machine's address)",
    "address already in use": "every port of the range is held by other processes (another pool, another user's MATLAB)",
}


@rule("NET026", SYMBOL, "error", "a MATLAB parallel pool cannot open the ports it listens on", impact=4)
def parallel_pool_ports_blocked(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, MATLAB's "Failed to open any port in the range [27370 28370] ... Failed
        to bind to ::1:28370 with error: Cannot assign requested address", and "Failed to bind to
        endpoint: tcp://...:27470/protocol/catapult" (MathWorks bug report 2968710).

    Why it matters:
        parpool's client listens on a port of pctconfig's portrange, [27370 28370] by default, and
        the workers connect back to it; when no port can be opened, or a firewall refuses the
        workers' connections, no pool starts and parfor, spmd and parfeval fail.

    How to fix:
        Read the bind error: an address on no interface (IPv6's ::1 turned off) needs the
        loopback's IPv6 address or a client host name that resolves to this machine
        (pctconfig('hostname', ...)); ports in use need another range (pctconfig('portrange',
        [a b])). For a cluster profile, the range must be open to the workers in the firewall.

    References:
        - https://www.mathworks.com/help/parallel-computing/pctconfig.html
        - https://www.mathworks.com/help/matlab-parallel-server/requirements-and-ports-for-matlab-parallel-server.html
        - https://man7.org/linux/man-pages/man2/bind.2.html (EADDRNOTAVAIL, EADDRINUSE)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = next((t for t in told if t.get("error")), told[0])
    error = str(s.get("error") or "").strip()
    why = _WHY.get(error.lower(), "a firewall, or other processes holding the ports")
    if s.get("id") == "matlab:pool-failed-to-bind-endpoint":
        why = ("no port of the range was free for the pool's endpoint: MathWorks bug report 2968710 names a Processes pool "
               "of more than 100 workers on one machine; other pools or processes holding the range do the same")
    where = f" [{s.get('low')} {s.get('high')}]" if s.get("low") else ""
    bound = f" ({s.get('address')}:{s.get('port')}: {error})" if error else ""
    fix = ("ss -ltn | awk '$4 ~ /:2[78][0-9][0-9][0-9]$/' | head   # who holds ports of the pool's range\n"
           "ip -6 addr show dev lo; sysctl net.ipv6.conf.lo.disable_ipv6   # ::1 must exist for a pool that binds it\n"
           "matlab -batch \"pctconfig('hostname','127.0.0.1','portrange',[30000 31000]); parpool('Processes',4)\"   "
           "# in MATLAB: a client address this machine has, and a free range\n"
           "# a cluster profile: the administrators must let the workers reach that range on the client machine")
    yield Hit(message=f"MATLAB's parallel pool could not open a port of its range{where}{bound} (line {s.get('line')}: "
                      f"\"{told_text(s)}\"): {why}",
              fix=fix, evidence=told_evidence(s))
