"""Ray's object-store lines about /dev/shm for shm-too-small (MEM003), and a Jupyter kernel that died
for host-memory-oom-killed (MEM006) at info, on real pastes (tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

from rulekit import fired, paste_facts, recorded_paste_facts, run_rule


def test_raylet_request_larger_than_dev_shm_is_decoded():
    (f,) = fired("shm-too-small", recorded_paste_facts("gpustack-5014-ray-plasma-request-exceeds-dev-shm.txt"))
    # 10200547328 and 9663676416 bytes
    assert f.severity == "warning" and "asked for 9.5 GiB of /dev/shm and 9.0 GiB is there" in f.message
    assert "--shm-size" in f.fix


def test_object_store_moved_to_tmp_wrapped_over_lines():
    (f,) = fired("shm-too-small", recorded_paste_facts("open-instruct-1067-ray-object-store-on-tmp.txt"))
    assert "/dev/shm has only 5.0 GiB free" in f.message and "--shm-size=10.24gb" in f.message


def test_ray_refusing_to_start_names_both_sizes(tmp_path):
    # services.py's ValueError, its format filled in (ray_object_store.toml's example)
    text = ("ValueError: The configured object store size (12.0 GB) exceeds /dev/shm size (0.067108864 GB). This will "
            "harm performance. Consider deleting files in /dev/shm or increasing its size with --shm-size in Docker. "
            "To ignore this warning, set RAY_OBJECT_STORE_ALLOW_SLOW_STORAGE=1.\n")
    (f,) = fired("shm-too-small", paste_facts(tmp_path, text))
    assert "Ray refused to start" in f.message and "(12.0 GB)" in f.message and "(0.067108864 GB)" in f.message


def test_dead_kernel_alone_is_a_hint_naming_both_causes():
    (f,) = fired("host-memory-oom-killed", recorded_paste_facts("2017-fall-4-kernel-appears-to-have-died.txt"))
    assert f.severity == "info" and "segmentation fault" in f.message and "memory" in f.message
    assert "memory.events" in f.fix and "$MEM_LIMIT" in f.fix


def test_kernel_failing_after_a_named_amount_of_memory_is_a_hint_about_the_limit():
    (f,) = fired("host-memory-oom-killed", recorded_paste_facts("python-text-analysis-3-kernel-fails-after-1gb.txt"))
    assert f.severity == "info" and "memory limit of the notebook server" in f.message


def test_a_kernel_crash_with_no_memory_named_is_not_read_as_a_memory_limit():
    # a near miss: "Kernel crashes after restarting crashed jupter notebook", a stale shared-memory segment
    # (stale-shm-segments), with no memory amount in the sentence and no Jupyter line
    findings, _ = run_rule("host-memory-oom-killed", recorded_paste_facts("suite3d-51-stale-shm-segment-after-crash.txt"))
    assert all(f.severity != "warning" for f in findings)
    assert not any("notebook kernel" in f.message for f in findings)
