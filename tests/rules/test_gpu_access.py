"""GPU023 gpu-device-permission-denied and GPU024 container-nvidia-libs-not-bound: on public pastes
(tests/fixtures/pastes, SOURCES.md there), set F's tickets, and the devices probe of a node as a
snapshot records it (probes/devices.json), replayed."""

from __future__ import annotations

import json

import pytest

from conftest import NODES
from rulekit import PASTES, fired, recorded_paste_facts
from hpcdoctor import pipeline
from hpcdoctor.checks import devices
from hpcdoctor.runner import Options
from hpcdoctor.sysroot import RecordingSysRoot, ReplaySysRoot
from hpcdoctor.triage.paste import open_paste

BLIND_F = NODES.parent / "tickets_blind_f"


def ticket_facts(name: str):
    with open_paste([str(BLIND_F / name)]) as (root, _recognised, _notes):
        return pipeline.gather(root, Options())


def node(tmp_path, probe, env=None):
    """A snapshot holding only the devices probe and an environment, replayed."""
    snap = tmp_path / "snap"
    (snap / "probes").mkdir(parents=True)
    (snap / "cmd").mkdir()
    (snap / "probes" / "devices.json").write_text(json.dumps(probe))
    (snap / "cmd" / "env.txt").write_text("".join(f"{k}={v}\n" for k, v in (env or {}).items()))
    (snap / "cmd" / "index.json").write_text(json.dumps([{"argv": ["env"], "rc": 0, "stdout": "env.txt", "stderr": ""}]))
    return pipeline.gather(ReplaySysRoot(snap), Options())


def nvidia_node(path, mode, gid, rw, group="video"):
    return {"path": path, "mode": mode, "uid": 0, "gid": gid, "group": group, "rw": rw}


DENIED = {"euid": 1000, "groups": [100, 1000], "ld_cache_read": True,
          "driver_libraries": {"libcuda.so.1": "/etc/ld.so.cache", "libnvidia-ml.so.1": "/etc/ld.so.cache"},
          "nodes": [nvidia_node("/dev/nvidiactl", "0660", 44, False), nvidia_node("/dev/nvidia0", "0660", 44, False),
                    nvidia_node("/dev/nvidia-uvm", "0666", 0, True, "root")]}


# -- gpu-device-permission-denied: pastes ------------------------------------------------------------

def test_nvml_insufficient_permissions_at_init_for_a_rootless_user():
    (hit,) = fired("gpu-device-permission-denied",
                   recorded_paste_facts("nvidia-container-toolkit-580-podman-user-1000-nvml-insufficient-permissions.txt"))
    assert "Insufficient Permissions" in hit.message and "line 10" in hit.message
    assert hit.fix.startswith("ls -l /dev/nvidia*") and "usermod -a -G" in hit.fix and "NVreg_DeviceFileMode" in hit.fix


def test_nvml_denied_with_works_as_root():
    (hit,) = fired("gpu-device-permission-denied",
                   recorded_paste_facts("nvidia-container-toolkit-210-rootless-podman-nvml-insufficient-permissions.txt"))
    assert "line 1" in hit.message


def test_the_runtime_hooks_nvml_denial_is_selinux_labels():
    (hit,) = fired("gpu-device-permission-denied",
                   recorded_paste_facts("nvidia-docker-1523-nvidia-container-cli-nvml-insufficient-permissions.txt"))
    assert "SELinux" in hit.message and "label=disable" in hit.fix and "usermod" not in hit.fix


def test_a_group_only_listing_alone_is_the_normal_set_up():
    g = recorded_paste_facts("netdata-21359-nvidiactl-video-group-0660.txt")
    (listed,) = [s for s in g["facts"]["ticket"]["symptoms"] if s["id"] == "devices:nvidia-device-not-world-accessible"]
    assert (listed["mode"], listed["group"], listed["device"]) == ("rw-rw----", "video", "/dev/nvidiactl")
    assert listed["line"] == 10  # the crw-rw-rw- root root line above is the driver's default, not read
    assert not fired("gpu-device-permission-denied", g)


def test_device_file_mode_option_beside_the_users_words():
    g = ticket_facts("nvidia-driver-g06-52-device-files-video-group.txt")
    (hit,) = fired("gpu-device-permission-denied", g)
    assert "NVreg_DeviceFileMode=0660" in hit.message and "usermod -a -G video" in hit.fix


def test_epERM_from_a_device_cgroup_is_not_the_nodes_permission(tmp_path):
    from rulekit import paste_facts

    text = ("$ strace -e trace=openat nvidia-smi\n"
            + (PASTES / "netdata-21359-nvidiactl-video-group-0660.txt").read_text().splitlines()[9] + "\n"
            "openat(AT_FDCWD, \"/dev/nvidiactl\", O_RDWR) = -1 EPERM (Operation not permitted)\n"
            "It works only as root.\n")
    g = paste_facts(tmp_path, text)
    ids = {s["id"] for s in g["facts"]["ticket"]["symptoms"]}
    assert {"devices:nvidia-device-open-not-permitted", "devices:nvidia-device-not-world-accessible"} <= ids
    assert not fired("gpu-device-permission-denied", g)
    # the same open refused with EACCES is the nodes' permission
    g = paste_facts(tmp_path, text.replace("EPERM (Operation not permitted)", "EACCES (Permission denied)"), "b.txt")
    (hit,) = fired("gpu-device-permission-denied", g)
    assert "/dev/nvidiactl" in hit.message


# -- gpu-device-permission-denied: the node's own facts ----------------------------------------------

def test_live_nodes_outside_the_users_groups(tmp_path):
    (hit,) = fired("gpu-device-permission-denied", node(tmp_path, DENIED))
    assert "2 NVIDIA device node(s)" in hit.message and "/dev/nvidiactl (0660 0:video)" in hit.message
    assert "not in the group video" in hit.message and "usermod -a -G video" in hit.fix
    assert "srun --gpus=1" not in hit.fix


def test_live_member_of_the_group_with_a_mode_that_shuts_it_out(tmp_path):
    probe = dict(DENIED, groups=[44, 1000], nodes=[nvidia_node("/dev/nvidia0", "0600", 44, False)])
    (hit,) = fired("gpu-device-permission-denied", node(tmp_path, probe, {"SLURM_JOB_ID": "7"}))
    assert "this user is in that group" in hit.message and "srun --gpus=1" in hit.fix


def test_live_nodes_open_to_the_user_or_root(tmp_path):
    ok = dict(DENIED, nodes=[nvidia_node("/dev/nvidia0", "0666", 0, True, "root")])
    assert not fired("gpu-device-permission-denied", node(tmp_path / "a", ok))
    root = dict(DENIED, euid=0)
    assert not fired("gpu-device-permission-denied", node(tmp_path / "b", root))


# -- container-nvidia-libs-not-bound -----------------------------------------------------------------

def test_nested_apptainer_without_the_driver_libraries():
    g = ticket_facts("apptainer-1205-nested-container-no-nvml.txt")
    (hit,) = fired("container-nvidia-libs-not-bound", g)
    assert "line 7" in hit.message and "line 20" in hit.message and "apptainer exec --nv" in hit.fix
    assert not fired("gpu-driver-unusable", g)  # the run's fault, left to this rule


def test_a_run_that_asked_for_the_gpu_is_not_this_rule():
    g = recorded_paste_facts("nvidia-docker-1163-runtime-nvidia-nvml-library-not-found.txt")
    assert not fired("container-nvidia-libs-not-bound", g)
    assert fired("gpu-driver-unusable", g)
    assert not fired("container-nvidia-libs-not-bound", recorded_paste_facts("singularity-4783-exec-nv-libcuda-missing.txt"))


def test_singularity_exec_without_nv_then_libcuda_missing(tmp_path):
    from rulekit import paste_facts

    lines = (PASTES / "singularity-4783-exec-nv-libcuda-missing.txt").read_text().replace(" --nv", "")
    (hit,) = fired("container-nvidia-libs-not-bound", paste_facts(tmp_path, lines))
    assert "without asking for the GPU" in hit.message and hit.fix.startswith("apptainer exec --nv")


def test_live_apptainer_sees_the_nodes_not_the_libraries(tmp_path):
    probe = {"euid": 1000, "groups": [1000], "ld_cache_read": True,
             "driver_libraries": {"libcuda.so.1": None, "libnvidia-ml.so.1": None},
             "nodes": [nvidia_node("/dev/nvidiactl", "0666", 0, True, "root"), nvidia_node("/dev/nvidia0", "0666", 0, True, "root")]}
    g = node(tmp_path, probe, {"APPTAINER_CONTAINER": "/scratch/img.sif"})
    (hit,) = fired("container-nvidia-libs-not-bound", g)
    assert "1 NVIDIA GPU device node(s)" in hit.message and "apptainer exec --nv" in hit.fix
    # outside a container the same facts are the host's driver (gpu-driver-unusable's ground)
    assert not fired("container-nvidia-libs-not-bound", node(tmp_path / "host", probe))
    # found by the loader (--nv given): nothing to say
    # the driver's control node alone is no GPU given to the container (a CPU container of a GPU host)
    ctl_only = dict(probe, nodes=probe["nodes"][:1])
    assert not fired("container-nvidia-libs-not-bound", node(tmp_path / "ctl", ctl_only, {"APPTAINER_CONTAINER": "x"}))
    bound = dict(probe, driver_libraries={"libcuda.so.1": "/.singularity.d/libs/libcuda.so.1", "libnvidia-ml.so.1": None})
    assert not fired("container-nvidia-libs-not-bound", node(tmp_path / "nv", bound, {"APPTAINER_CONTAINER": "x"}))


def test_an_unreadable_linker_cache_is_unknown_not_missing(tmp_path):
    probe = {"euid": 1000, "groups": [], "ld_cache_read": False, "nodes": [nvidia_node("/dev/nvidia0", "0666", 0, True)],
             "driver_libraries": {"libcuda.so.1": None, "libnvidia-ml.so.1": None}}
    g = node(tmp_path, probe, {"APPTAINER_CONTAINER": "x"})
    assert "devices.driver_libraries" in g["unknown"]
    assert not fired("container-nvidia-libs-not-bound", g)


# -- the probe, recorded and replayed ------------------------------------------------------------

def test_devices_probe_round_trip(tmp_path, monkeypatch):
    # /dev/null: a character device every Linux has, readable and writable by every user
    monkeypatch.setattr(devices, "NODE_GLOBS", ("/dev/null",))
    rec = RecordingSysRoot(tmp_path / "snap")
    recorded = devices.collect(rec, None)
    rec.finish({})
    replayed = devices.collect(ReplaySysRoot(tmp_path / "snap"), None)
    assert replayed == recorded
    (null,) = recorded["devices"]["nodes"]
    assert null["path"] == "/dev/null" and null["mode"] == "0666" and null["rw"] is True


def test_a_hostile_devices_probe_is_unknown(tmp_path):
    g = node(tmp_path, ["not", "a", "dict"])
    assert "devices" in g["unknown"]
    assert not fired("gpu-device-permission-denied", g)


def test_live_kfd_outside_the_render_group_is_the_rocm_rule(tmp_path):
    probe = {"euid": 1000, "groups": [1000], "ld_cache_read": True, "driver_libraries": {},
             "nodes": [{"path": "/dev/kfd", "mode": "0660", "uid": 0, "gid": 109, "group": "render", "rw": False},
                       {"path": "/dev/dri/renderD128", "mode": "0660", "uid": 0, "gid": 109, "group": "render", "rw": False}]}
    g = node(tmp_path, probe)
    (hit,) = fired("rocm-kfd-permission-denied", g)
    assert "/dev/kfd (0660 0:render)" in hit.message and "not in render" in hit.message
    assert not fired("gpu-device-permission-denied", g)  # no NVIDIA node: not the NVIDIA rule


def test_new_patterns_look_once_per_node_name_on_a_hostile_line():
    # A line of the matcher's cap (4096 characters) made of what each pattern starts on: the first
    # forms scanned up to 200 characters from every slash (a 2048-line paste: 72 s for the user site).
    import time

    from hpcdoctor.knowledge import messages

    entries = {e.key: e for fam in messages.families(("devices", "python_site", "container"))
               for e in fam.entries if e.pattern is not None}
    hostile = {"nvidia-device-open-denied": "/dev/nvidia0 ", "nvidia-device-open-not-permitted": "/dev/nvidia0 ",
               "nvidia-device-not-world-accessible": "crw-rw---- 1 root video 195, 0 ", "user-site-path": "/a",
               "home-conda-path": "/home/", "apptainer-command": "apptainer exec "}
    for key, unit in hostile.items():
        line = (unit * (4096 // len(unit)))[:4096]
        t0 = time.perf_counter()
        for _ in range(300):  # the first user-site form: 2 s here; these: milliseconds
            entries[key].pattern.search(line)
        assert time.perf_counter() - t0 < 1.0, key


def test_a_snapshot_without_the_devices_probe_says_so_and_fires_nothing():
    from rulekit import facts

    g = facts("h100-kvm-1gpu")  # recorded before the devices check existed
    assert g["unknown"]["devices"] == "probe devices was not recorded"
    assert not fired("gpu-device-permission-denied", g) and not fired("container-nvidia-libs-not-bound", g)


# Only the user's word that nvidia-smi ran in docker (prose:docker-said), beside NVML's library-not-found:
# the container's missing libraries or links, not the host's driver (a warning: how it was started is not shown).
@pytest.mark.parametrize("paste", [
    "nvidia-container-runtime-75-nvml-links-ldconfig.txt",   # "docker container": ldconfig in it fixed the links
    "../tickets_blind_t/fasterliveportrait-8-container-nvml-library-links-missing.txt",   # set T, unsealed
])
def test_nvml_library_missing_in_a_docker_container_the_user_names(paste):
    g = recorded_paste_facts(paste)
    (hit,) = fired("container-nvidia-libs-not-bound", g)
    assert hit.severity == "warning" and "docker container" in hit.message and "ldconfig" in hit.fix
    assert not fired("gpu-driver-unusable", g)   # the container's libraries, not the host's driver
