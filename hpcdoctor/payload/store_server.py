"""Rank 0's TCPStore server in a process of its own, under a memory ceiling (issue 27). Runs in the
*target* interpreter (standard library and torch), started by cluster_probe.py on rank 0.

torch's store server keeps every key and queue item anyone who reaches its port sends, with no
limit of its own; in rank 0's process that is memory a peer chooses. Here the server's data may
grow by GROW_BYTES past what importing torch took (RLIMIT_DATA, read after the import so a CUDA
build's larger libraries are counted as they are): past it the server's allocations fail, and torch
answers a failed allocation by closing that client's connection, so a flood costs the cluster check
(reported as lost posts or a lost store) and never the node's memory.

    store_server.py PORT WORLD TIMEOUT_S     prints "ready <kind> <ceiling bytes>", serves until stdin closes
"""

import datetime
import os
import resource
import sys

GROW_BYTES = 512 << 20  # a node report is ~40 KB: 4,096 nodes take about 160 MB, a flood stops here


def data_bytes():
    """This process's data segment (VmData), or None where /proc does not say."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) << 10
    except (OSError, ValueError, IndexError):
        pass
    return None


def grow_bytes():
    # A test-only knob, as cluster_probe's: a small ceiling that a test can fill in seconds.
    if os.environ.get("HPCDOCTOR_TESTING") == "1" and os.environ.get("HPCDOCTOR_TEST_STORE_GROW_MIB"):
        return int(os.environ["HPCDOCTOR_TEST_STORE_GROW_MIB"]) << 20
    return GROW_BYTES


def cap_data(grow):
    """Set RLIMIT_DATA to the data in use plus ``grow``; the ceiling in bytes, or None."""
    used = data_bytes()
    if used is None:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    ceiling = used + grow
    if hard != resource.RLIM_INFINITY:
        ceiling = min(ceiling, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (ceiling, hard))
    return ceiling


def main(argv):
    port, world, timeout = int(argv[1]), int(argv[2]), float(argv[3])
    from torch.distributed import TCPStore

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import cluster_wire

    ceiling = cap_data(grow_bytes())
    store = TCPStore("127.0.0.1", port, world, True, timeout=datetime.timedelta(seconds=timeout),
                     wait_for_workers=False)
    print("ready %s %s" % (cluster_wire.store_kind(store), ceiling or 0), flush=True)
    sys.stdin.read()  # until rank 0 closes it, or dies
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
