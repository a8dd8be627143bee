"""Ray's object store and /dev/shm: what Ray's lines say, their numbers decoded, for shm-too-small
(rules/memory.py)."""

from __future__ import annotations


# Ray's object store messages about /dev/shm (knowledge/messages/ray_object_store.toml).
RAY_SHM = "ray_object_store:"


def _gib(n: float) -> str:
    return f"{n / 2**30:.1f} GiB"


def ray_said(s: dict) -> str:
    """What one of Ray's object-store lines says, its numbers decoded (bytes, or GB = 1e9 bytes)."""
    key = s.get("key")
    request, avail = s.get("request"), s.get("available")
    if key == "plasma-request-exceeds-shm":
        if str(request or "").isdigit() and str(avail or "").isdigit():
            return (f"Ray's object store asked for {_gib(int(request))} of {s.get('directory') or '/dev/shm'} and "
                    f"{_gib(int(avail))} is there (current Ray counts 90% of the free space): /dev/shm is too small for the "
                    "object store; the raylet shrinks the store to fit, or stops")
        return "Ray's object store asked for more than /dev/shm has: /dev/shm is too small for the object store"
    if key == "object-store-using-tmp":
        size = f"; Ray suggests --shm-size={s['suggested']}gb" if s.get("suggested") else ""
        have = _gib(int(avail)) if str(avail or "").isdigit() else "too little"
        return (f"/dev/shm has only {have} free, less than Ray's object store, so Ray put the store in "
                f"{s.get('directory') or '/tmp'} (a disk): it runs, slower{size}")
    if not s.get("request_gb"):   # a title's form, without the two figures
        return "Ray refused to start: its object store is larger than /dev/shm"
    return (f"Ray refused to start: the object store ({s.get('request_gb')} GB) is larger than /dev/shm "
            f"({s.get('available_gb')} GB)")
