"""The user's inotify watches or instances used up: the kernel refuses a file watcher with ENOSPC
(inotify_add_watch) or EMFILE (inotify_init), and each program says so in its own words
(knowledge/messages/inotify.toml: Node, GNU tail, Java, .NET, watchdog, systemd, VS Code)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "inotify-watch-limit-too-low"
# the entries that name inotify_init's EMFILE (max_user_instances); every other one is ENOSPC (max_user_watches)
_INSTANCES = frozenset({"inotify:java-instances-limit", "inotify:dotnet-instances-limit", "inotify:instance-limit-reached"})

_LOOK = ("sysctl fs.inotify.max_user_watches fs.inotify.max_user_instances   # the limits now (per user, node-wide)\n"
         "find /proc/[0-9]*/fd -lname 'anon_inode:inotify' 2>/dev/null | cut -d/ -f3 | sort | uniq -c | sort -rn | head"
         "   # which processes hold inotify instances (PID, count)\n")
_RAISE_WATCHES = ("echo fs.inotify.max_user_watches=524288 | sudo tee /etc/sysctl.d/90-inotify.conf && sudo sysctl --system"
                  "   # administrators: about 1 KiB of kernel memory per watch in use")
_RAISE_INSTANCES = ("echo fs.inotify.max_user_instances=1024 | sudo tee /etc/sysctl.d/90-inotify.conf && sudo sysctl --system"
                    "   # administrators: the kernel's default is 128 per user")


@rule("SYS047", SYMBOL, "error", "the user's inotify watches or instances are used up: file watchers fail", impact=4,
      also={"advice": "on a live node, fs.inotify.max_user_watches at the kernel's floor (8192)"})
def inotify_watch_limit_too_low(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a program's own words that the kernel refused an inotify watch or instance:
        Node's "ENOSPC: System limit for number of file watchers reached" and older Node's
        "Error: watch ENOSPC" (fs.watch, under chokidar, webpack, Vite, nodemon, Jest), GNU tail's
        "inotify resources exhausted", Java's "User limit of inotify watches reached" and
        "User limit of inotify instances reached or too many open files", .NET's "The configured
        user limit (N) on the number of inotify watches|instances has been reached", watchdog's and
        systemd's "inotify watch limit reached" and "inotify instance limit reached", VS Code's
        "Unable to watch for file changes in this large workspace". Watches (ENOSPC) and instances
        (EMFILE) are told apart: each has its own limit. On a live node (or its snapshot), advice
        where fs.inotify.max_user_watches is at the kernel's floor, 8192.

    Why it matters:
        The kernel counts inotify watches and instances per user across the whole node
        (fs.inotify.max_user_watches, max_user_instances). A dev server, an IDE's remote server or a
        watcher over a large tree (node_modules, a conda environment) uses them up, and then every
        watcher of that user fails, with ENOSPC although the disk has room. Before Linux 5.11 the
        default was 8192 watches; from 5.11 it scales with memory (1% of it, 8192 to 1048576), and
        instances stay at 128.

    How to fix:
        Read the limits and which processes hold instances; an administrator raises the limit in
        /etc/sysctl.d and reloads it; a user can watch less (exclude node_modules, or poll).

    References:
        - https://man7.org/linux/man-pages/man7/inotify.7.html (ENOSPC, EMFILE; /proc/sys/fs/inotify)
        - https://github.com/torvalds/linux/commit/92890123749bafc317bbfacbe0a62ce08d78efb7 (default max_user_watches scaled with memory, Linux 5.11)
        - https://github.com/nodejs/node/blob/main/lib/internal/fs/watchers.js (UV_ENOSPC: System limit for number of file watchers reached)
        - https://code.visualstudio.com/docs/setup/linux (error ENOSPC: fs.inotify.max_user_watches)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        yield from _kernel_floor(f)
        return
    s = told[0]
    instances = s.get("id") in _INSTANCES
    limit = s.get("limit")
    named = f" ({limit})" if limit else ""
    what = (f"the user's inotify instances reached fs.inotify.max_user_instances{named} (inotify_init: EMFILE)"
            if instances else
            f"the user's inotify watches reached fs.inotify.max_user_watches{named} (inotify_add_watch: ENOSPC, "
            "not a full disk)")
    yield Hit(message=f"{what} (line {s.get('line')}: \"{told_text(s)}\"): every file watcher of this user on the "
                      "node fails until watches are freed or the limit is raised",
              fix=_LOOK + (_RAISE_INSTANCES if instances else _RAISE_WATCHES), evidence=told_evidence(s))


# the kernel's own floor for max_user_watches: the pre-5.11 default, and the least the 5.11 formula
# gives (fs/notify/inotify/inotify_user.c: clamp(..., 8192, 1048576))
_KERNEL_FLOOR = 8192


def _kernel_floor(f: FactView) -> Iterator[Hit]:
    """The live reading (checks/system.py): advice where max_user_watches is at the kernel's floor.
    Read with f[...] so a paste without the reading is skipped with its reason, never passed."""
    watches = f["system.inotify.max_user_watches"]
    if not isinstance(watches, int) or watches > _KERNEL_FLOOR:
        return
    instances = f.get("system.inotify.max_user_instances")
    yield Hit(message=f"fs.inotify.max_user_watches is {watches}, the kernel's floor (the default before Linux 5.11; "
                      "from 5.11 the kernel gives 1% of memory's worth, up to 1048576): an IDE's remote server, a dev "
                      "server or a file watcher over a large tree uses it up, and every watcher of the user then fails "
                      "with ENOSPC",
              fix=_LOOK + _RAISE_WATCHES, severity="advice",
              evidence={"system.inotify.max_user_watches": watches, "system.inotify.max_user_instances": instances,
                        "kernel_floor": _KERNEL_FLOOR})
