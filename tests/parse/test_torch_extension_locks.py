"""checks/torch_extensions.py on a real directory tree laid out as torch 2.13.0's cpp_extension lays it
out (TORCH_EXTENSIONS_DIR/<name>/lock, or ~/.cache/torch_extensions/<py>_<cu>/<name>/lock), with real
file ages (os.utime) and a lock this test process holds open as a build in progress does; then the
probe replayed from a snapshot folder into torch-extension-build-lock-stale."""

from __future__ import annotations

import json
import os
import time

from hpcdoctor.checks.torch_extensions import collect, extension_roots, scan_locks
from hpcdoctor.sysroot import ReplaySysRoot
from rulekit import facts, fired, run_rule

HOUR = 3600.0


def _lock(path, age_s: float) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    then = time.time() - age_s
    os.utime(path, (then, then))
    return str(path)


def test_roots_follow_torchs_own_order():
    assert extension_roots({"TORCH_EXTENSIONS_DIR": "/scratch/ext", "HOME": "/home/a"}) == ["/scratch/ext"]
    assert extension_roots({"XDG_CACHE_HOME": "/c", "HOME": "/home/a"}) == ["/c/torch_extensions"]
    assert extension_roots({"HOME": "/home/a"}) == ["/home/a/.cache/torch_extensions"]
    assert extension_roots({}) == []


def test_ages_and_holders_of_real_lock_files(tmp_path):
    root = tmp_path / "torch_extensions"
    old = _lock(root / "py311_cu128" / "fused_adam" / "lock", 3 * HOUR)
    fresh = _lock(root / "py311_cu128" / "cpu_adam" / "lock", 60)
    direct = _lock(root / "my_ext" / "lock", 2 * HOUR)         # TORCH_EXTENSIONS_DIR/<name>/lock
    held = _lock(root / "py311_cu128" / "building" / "lock", 5 * HOUR)
    (root / "py311_cu128" / "built_ok").mkdir()                 # a finished build: no lock left
    fd = os.open(held, os.O_RDONLY)                              # as FileBaton.try_acquire keeps its descriptor
    try:
        data = scan_locks([str(root), str(tmp_path / "absent")])
    finally:
        os.close(fd)
    by_path = {x["path"]: x for x in data["locks"]}
    assert set(by_path) == {old, fresh, direct, held} and data["complete"]
    assert data["roots_found"] == [str(root)]
    assert abs(by_path[old]["age_s"] - 3 * HOUR) < 120 and by_path[fresh]["age_s"] < 600
    assert by_path[held]["held"] is True and by_path[old]["held"] is False and by_path[old]["mine"] is True


def test_a_recorded_probe_replays_into_the_rule_with_each_rm(tmp_path):
    root = tmp_path / "torch_extensions"
    old = _lock(root / "py311_cu128" / "fused_adam" / "lock", 3 * HOUR)
    _lock(root / "py311_cu128" / "cpu_adam" / "lock", 60)     # a build that started a minute ago
    snap = tmp_path / "snap"
    (snap / "probes").mkdir(parents=True)
    (snap / "probes" / "torch_extension_locks.json").write_text(json.dumps(scan_locks([str(root)])))
    got = collect(ReplaySysRoot(snap), None)["torch_extensions"]
    g = facts("cpu-kvm-2core", **{"torch_extensions.locks": got["locks"],
                                 "torch_extensions.roots_found": got["roots_found"]})
    (f,) = fired("torch-extension-build-lock-stale", g)
    assert f.severity == "warning" and f.message.startswith("1 torch extension build lock(s)")
    assert f"rm {old}   #" in f.fix and "cpu_adam" not in f.fix
    assert f.evidence["threshold_age_s"] == 1800


def test_held_young_or_unread_locks_are_not_called_stale(tmp_path):
    recent = [{"path": "/h/.cache/torch_extensions/py311_cu128/a/lock", "age_s": 120.0, "held": False, "mine": True},
              {"path": "/h/.cache/torch_extensions/py311_cu128/b/lock", "age_s": 9 * HOUR, "held": True, "mine": True},
              {"path": "/h/.cache/torch_extensions/py311_cu128/c/lock", "age_s": 9 * HOUR, "held": None, "mine": True}]
    assert not fired("torch-extension-build-lock-stale", facts("cpu-kvm-2core", **{"torch_extensions.locks": recent}))
    # a snapshot without the probe: the judgement is skipped with its reason, never a pass
    findings, skipped = run_rule("torch-extension-build-lock-stale",
                                 {**facts("cpu-kvm-2core"), "facts": {**facts("cpu-kvm-2core")["facts"],
                                  "torch_extensions": {"locks": collect(ReplaySysRoot(tmp_path), None)["torch_extensions"]["locks"]}}})
    assert findings == [] and "probe torch_extension_locks was not recorded" in skipped[0]["reason"]
