"""The per-GPU lock of the benchmark payload (runs in the job's Python: standard library only).

Ranks of one job start together and would otherwise time their GEMMs on a GPU another rank is
measuring: each GPU's measurements run only under an exclusive lock named by the GPU's UUID.
"""

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_timing import emit  # noqa: E402


class GpuLock:
    """An exclusive lock per GPU, so ranks started together do not measure each other."""

    def __init__(self, key, wait):
        import fcntl

        self.fcntl = fcntl
        lockdir = os.environ.get("HPCDOCTOR_LOCK_DIR") or tempfile.gettempdir()
        self.path = os.path.join(lockdir, "hpcdoctor-bench-%s.lock" % "".join(c if c.isalnum() else "_" for c in key))
        try:
            self.fh = open(self.path, "a")
        except OSError as exc:
            raise TimeoutError("cannot create the lock %s (%s): measuring without it could measure another "
                               "rank's benchmark; set HPCDOCTOR_LOCK_DIR to a writable directory"
                               % (self.path, exc.strerror or exc))
        self.waited = 0.0
        deadline = time.monotonic() + wait
        t0 = time.monotonic()
        while True:
            try:
                fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() > deadline:
                    self.fh.close()
                    raise TimeoutError("another benchmark holds %s" % self.path)
                time.sleep(0.1)
        self.waited = round(time.monotonic() - t0, 3)

    def release(self):
        self.fcntl.flock(self.fh, self.fcntl.LOCK_UN)
        self.fh.close()


def gpu_lock(torch, i, seconds, locks):
    """Take GPU i's lock (waiting at most a quarter of the share): its measurements run only under it."""
    emit({"at": ["gpus", i, "index"], "value": i})
    emit({"at": ["gpus", i, "name"], "value": torch.cuda.get_device_name(i)})
    props = torch.cuda.get_device_properties(i)
    uuid = str(getattr(props, "uuid", "") or "")
    emit({"at": ["gpus", i, "uuid"], "value": uuid})
    try:
        lock = GpuLock(uuid or "gpu%d" % i, wait=min(30.0, seconds / 4))
    except TimeoutError as exc:
        locks[i] = str(exc)
        emit({"at": ["gpus", i, "stopped"], "value": str(exc)})
        return {"skipped": str(exc)}
    locks[i] = lock
    emit({"at": ["gpus", i, "lock_wait_s"], "value": lock.waited})
    return {"waited_s": lock.waited}


def locked(locks, i, fn, release=False):
    lock = locks.get(i)
    if not isinstance(lock, GpuLock):
        return {"skipped": lock or "GPU %d was not locked" % i}
    try:
        return fn()
    finally:
        if release:
            lock.release()
            locks[i] = "released"
