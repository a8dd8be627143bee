"""ENV035-ENV038 (rules/container_runtimes.py) on the blind sets' tickets (G, H, I, unsealed), on
public pastes (tests/fixtures/pastes/SOURCES.md) and on the emitters' own format strings
(knowledge/messages/apptainer.toml, enroot.toml); silent on real pastes holding similar words; and
live, on facts as checks/containers.py gathers them (a replayed snapshot where the check reads
files)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from rulekit import PASTES, facts, fired, paste_facts, recorded_paste_facts, ticket_file_facts, told_facts
from hpcdoctor import pipeline
from hpcdoctor.checks import containers
from hpcdoctor.knowledge import messages
from hpcdoctor.runner import Options
from hpcdoctor.sysroot import ReplaySysRoot
from hpcdoctor.triage.paste import open_paste
from hpcdoctor.triage.messages import find_messages

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
APPTAINER_2190 = FIXTURES / "tickets_blind_g" / "apptainer-2190-build-fakeroot-command-missing.txt"
K8S_52 = FIXTURES / "tickets_blind_g" / "k8s-device-plugin-52-nvidia-runtime-default-on-cpu-node.txt"
APPTAINER_2261 = FIXTURES / "tickets_blind_h" / "apptainer-2261-nv-omits-libcudadebugger.txt"
PYXIS_12 = FIXTURES / "tickets_blind_i" / "pyxis-12-enroot-runtime-path-permission-denied.txt"


@functools.lru_cache(maxsize=None)
def _ticket(path: Path):
    with open_paste([str(path)]) as (root, _r, _n):
        return pipeline.gather(root, Options())


@functools.lru_cache(maxsize=None)
def _paste(name: str):
    return recorded_paste_facts(name)


def _examples(family: str, symbol: str):
    fam = next(f for f in messages.families() if f.id == family)
    return [(e.key, e.get("example")) for e in fam.entries if symbol in (e.get("rules") or []) and e.get("example")]


# -- ENV035 apptainer-fakeroot-unavailable ------------------------------------------------------

def test_a_build_that_failed_without_subuid_or_fakeroot_command_is_the_missing_fake_root():
    (f,) = fired("apptainer-fakeroot-unavailable", _ticket(APPTAINER_2190))
    assert f.severity == "error" and "no /etc/subuid entry and no fakeroot command" in f.message
    assert "line 18" in f.message and "apptainer config fakeroot --add USER" in f.fix


@pytest.mark.parametrize("name, words", [
    ("singularity-3936-fakeroot-gid-map-no-subuid.txt", "could not write the fake root's ID map"),
    ("apptainer-1751-newgidmap-target-other-user.txt", "newuidmap/newgidmap could not write the /etc/subuid mapping"),
])
def test_the_starters_refusals_in_public_pastes(name, words):
    (f,) = fired("apptainer-fakeroot-unavailable", _paste(name))
    assert f.severity == "error" and words in f.message


def test_every_refusal_apptainer_prints_fires_with_its_own_reason():
    examples = _examples("apptainer", "apptainer-fakeroot-unavailable")
    assert len(examples) >= 12
    for key, example in examples:
        (f,) = fired("apptainer-fakeroot-unavailable", told_facts(example + "\n"))
        assert f.severity == "error" and "Apptainer refused the fake root" in f.message, key


def test_silent_where_the_fakeroot_command_was_there_or_nothing_failed(tmp_path):
    # the build had the fakeroot command and failed on the image's missing getopt
    assert not fired("apptainer-fakeroot-unavailable", _paste("apptainer-3629-fakeroot-getopt-missing.txt"))
    assert not fired("apptainer-fakeroot-unavailable", _paste("singularity-2244-nv-broken-3-0-0-healthy.txt"))
    # the same fallback lines of set G's ticket, before its failure: a build still running
    head = "\n".join(APPTAINER_2190.read_text().splitlines()[:17]) + "\n"
    assert "FATAL" not in head and "fakeroot command not found" in head
    assert not fired("apptainer-fakeroot-unavailable", paste_facts(tmp_path, head))


def _fakeroot(**kw):
    base = {"apptainer": "/usr/bin/apptainer", "fakeroot_command": None, "max_user_namespaces": 15000,
            "unprivileged_userns_clone": None, "subuid": {"listed": False, "disabled": False, "count": 0, "usable": False}}
    base.update(kw)
    return facts("h100-kvm-1gpu", **{"containers.fakeroot": base})


def test_live_user_namespaces_off_or_no_way_to_fake_root():
    # user namespaces off: user-namespaces-disabled reports the sysctl (tests/rules/test_sessions.py), not this rule
    assert not fired("apptainer-fakeroot-unavailable", _fakeroot(max_user_namespaces=0))
    (f,) = fired("user-namespaces-disabled", _fakeroot(max_user_namespaces=0))
    assert f.severity == "info" and "user.max_user_namespaces = 0" in f.message
    (f,) = fired("apptainer-fakeroot-unavailable", _fakeroot())
    assert f.severity == "info" and "no usable /etc/subuid range" in f.message
    assert not fired("apptainer-fakeroot-unavailable", _fakeroot(fakeroot_command="/usr/bin/fakeroot"))
    assert not fired("apptainer-fakeroot-unavailable", _fakeroot(subuid={"listed": True, "count": 65536, "usable": True}))
    assert not fired("apptainer-fakeroot-unavailable", _fakeroot(apptainer=None, max_user_namespaces=0))


def test_subuid_entries_as_apptainer_reads_them():
    text = "admin:100000:65536\n1001:4294836224:65536\n1089:4294770688:65536\n"   # apptainer/apptainer#892's /etc/subuid
    assert containers.subuid_entry(text, "ai2010814474", 1089)["usable"] is True
    assert containers.subuid_entry(text, "bob", 1002)["listed"] is False
    assert containers.subuid_entry("!1089:4294770688:65536\n", None, 1089) == {
        "listed": False, "disabled": True, "count": 0, "usable": False}
    assert containers.subuid_entry("1089:100000:1000\n", None, 1089)["usable"] is False   # under 65536 IDs


# -- ENV036 enroot-runtime-path-not-writable ----------------------------------------------------

def test_pyxis_import_refused_mkdir_of_run_enroot():
    (f,) = fired("enroot-runtime-path-not-writable", _ticket(PYXIS_12))
    assert f.severity == "error" and "/run/enroot" in f.message and "XDG_RUNTIME_DIR is unset" in f.message
    assert "ENROOT_RUNTIME_PATH /tmp/enroot-runtime/user-$(id -u)" in f.fix and "pyxis does not pass" in f.fix


@pytest.mark.parametrize("name, words", [
    ("pyxis-62-run-user-not-created.txt", "/run/user/1000 (Permission denied): XDG_RUNTIME_DIR names /run/user/<uid>"),
    ("pyxis-46-enroot-cache-path-root.txt", "/root (Permission denied): the path enroot resolved"),
])
def test_public_pastes_of_enroots_directories_refused(name, words):
    (f,) = fired("enroot-runtime-path-not-writable", _paste(name))
    assert words in f.message


def test_silent_on_an_import_that_failed_for_space():
    assert not fired("enroot-runtime-path-not-writable", _ticket(FIXTURES / "tickets_blind_i" / "pyxis-53-squashfs-no-space-on-run.txt"))


def test_enroot_conf_of_a_site_resolves_per_user():
    conf = containers.parse_enroot_conf((PASTES / "pyxis-91-enroot-conf-per-user-paths.txt").read_text())
    paths = containers.enroot_paths({"HOME": "/home/u"}, conf, {"u": "1000", "g": "100"})
    assert paths["ENROOT_RUNTIME_PATH"] == {"value": "/run/enroot/user-$(id -u)", "origin": "enroot.conf",
                                           "path": "/run/enroot/user-1000"}
    assert paths["ENROOT_CACHE_PATH"]["path"] == "/raid/enroot-cache/group-100"
    # nothing set: enroot's defaults, XDG_RUNTIME_DIR unset meaning /run
    paths = containers.enroot_paths({"HOME": "/home/u"}, {}, {"u": "1000"})
    assert paths["ENROOT_RUNTIME_PATH"]["path"] == "/run/enroot"
    assert paths["ENROOT_DATA_PATH"]["path"] == "/home/u/.local/share/enroot"
    # the environment first (enroot run by hand), and a command the check cannot evaluate stays unknown
    assert containers.enroot_paths({"ENROOT_CACHE_PATH": "/scratch/c", "HOME": "/h"}, conf, {})["ENROOT_CACHE_PATH"]["path"] == "/scratch/c"
    assert containers.expand("$(hostname)/x", {}, {}) is None
    # no HOME: the paths under it are unknown, never "/.local/share/enroot"
    assert containers.enroot_paths({}, {}, {"u": "1000"})["ENROOT_DATA_PATH"]["path"] is None


def _snapshot(tmp_path, env, files, writable):
    snap = tmp_path / "node"
    for path, text in files.items():
        p = snap / "fs" / path.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    (snap / "cmd").mkdir(parents=True)
    (snap / "cmd" / "env.txt").write_text("".join(f"{k}={v}\n" for k, v in env.items()))
    (snap / "cmd" / "index.json").write_text(json.dumps([{"argv": ["env"], "rc": 0, "stdout": "env.txt", "stderr": ""}]))
    (snap / "probes").mkdir()
    (snap / "probes" / "user_ids.json").write_text(json.dumps({"uid": 1000, "gid": 100, "name": "u", "group": "g"}))
    (snap / "probes" / "enroot_paths_writable.json").write_text(json.dumps(writable))
    return containers.collect(ReplaySysRoot(snap), None)["containers"]


def test_live_an_unwritable_runtime_path_from_the_recorded_node(tmp_path):
    got = _snapshot(tmp_path, {"PATH": "/usr/bin", "HOME": "/home/u"},
                    {"/usr/bin/enroot": "", "/etc/enroot/enroot.conf": "#ENROOT_RUNTIME_PATH ${XDG_RUNTIME_DIR}/enroot\n"},
                    [{"path": "/run/enroot", "exists": False, "nearest": "/run", "writable": False},
                     {"path": "/home/u/.cache/enroot", "exists": True, "nearest": "/home/u/.cache/enroot", "writable": True},
                     {"path": "/home/u/.local/share/enroot", "exists": True, "nearest": "/home/u/.local/share/enroot", "writable": True}])
    assert got["enroot"]["paths"]["ENROOT_RUNTIME_PATH"]["origin"] == "default"
    (f,) = fired("enroot-runtime-path-not-writable", facts("h100-kvm-1gpu", **{"containers.enroot": got["enroot"]}))
    assert f.message.startswith("ENROOT_RUNTIME_PATH resolves to /run/enroot (default") and "in /run" in f.message
    ok = dict(got["enroot"], paths={k: dict(v, writable=True) for k, v in got["enroot"]["paths"].items()})
    assert not fired("enroot-runtime-path-not-writable", facts("h100-kvm-1gpu", **{"containers.enroot": ok}))


def test_no_enroot_on_path_is_nothing_to_judge(tmp_path):
    got = _snapshot(tmp_path, {"PATH": "/usr/bin"}, {"/etc/enroot/enroot.conf": ""}, [])
    assert got["enroot"] == {"installed": False}


# -- ENV037 apptainer-nvliblist-missing-lib -----------------------------------------------------

def test_cuda_gdb_without_its_back_end_under_an_apptainer_older_than_the_list():
    (f,) = fired("apptainer-nvliblist-missing-lib", _ticket(APPTAINER_2261))
    assert f.severity == "error" and "libcudadebugger.so" in f.message
    assert "Apptainer 1.2.5 (line 1) predates 1.3.3" in f.message
    assert "sudo tee -a /etc/apptainer/nvliblist.conf" in f.fix and "--bind" in f.fix


def test_without_the_version_it_is_a_warning(tmp_path):
    text = "\n".join(ln for ln in APPTAINER_2261.read_text().splitlines() if "apptainer version" not in ln) + "\n"
    (f,) = fired("apptainer-nvliblist-missing-lib", paste_facts(tmp_path, text))
    assert f.severity == "warning" and "only from 1.3.3" in f.message


def test_silent_without_apptainer_or_for_libraries_it_always_listed():
    assert not fired("apptainer-nvliblist-missing-lib", _paste("cuda-python-2711-cuda-gdb-no-debugger-backend.txt"))
    assert not fired("apptainer-nvliblist-missing-lib", _paste("singularity-4783-exec-nv-libcuda-missing.txt"))


def test_live_a_driver_library_the_installations_list_lacks():
    nvl = {"installed": True, "file": "/etc/apptainer/nvliblist.conf", "listed": ["libcuda.so"],
           "unlisted": [{"name": "libcudadebugger.so", "release": "1.3.3", "host": ["libcudadebugger.so.1"]}]}
    (f,) = fired("apptainer-nvliblist-missing-lib", facts("h100-kvm-1gpu", **{"containers.nvliblist": nvl}))
    assert f.severity == "warning" and "libcudadebugger.so.1" in f.message
    assert not fired("apptainer-nvliblist-missing-lib",
                     facts("h100-kvm-1gpu", **{"containers.nvliblist": dict(nvl, unlisted=[])}))


def test_the_list_and_ldconfig_are_read_as_apptainer_reads_them():
    text = "# put libs here (must end in .so)\nlibcuda.so\nlibcudadebugger.so\n\n/usr/share/nvidia/nvoptix.bin\n"
    assert containers.nvliblist_names(text) == ["libcuda.so", "libcudadebugger.so", "/usr/share/nvidia/nvoptix.bin"]
    recorded = (PASTES / "ldconfig-p-project-vm.txt").read_text()
    names = containers.ldconfig_names(recorded)
    assert names and all(n.startswith("lib") and ".so" in n for n in names)
    assert "libc.so.6" in names


# -- ENV038 nvidia-runtime-on-node-without-gpu --------------------------------------------------

def test_the_nvidia_hook_failing_on_a_cpu_node_with_nvidia_the_default():
    (f,) = fired("nvidia-runtime-on-node-without-gpu", _ticket(K8S_52))
    assert f.severity == "error" and "on a node without a GPU" in f.message
    assert "the NVIDIA runtime is the default runtime (line 12" in f.message
    assert "d.pop(\"default-runtime\", None)" in f.fix and "nvidia-ctk runtime configure --runtime=containerd" in f.fix
    assert not fired("gpu-driver-unusable", _ticket(K8S_52))


@pytest.mark.parametrize("name", ["libnvidia-container-103-cuda-unknown-error-reboot.txt",
                                  "dockwater-10-container-cli-nvml-driver-not-loaded.txt"])
def test_silent_where_nothing_says_the_node_has_no_gpu(name):
    assert not fired("nvidia-runtime-on-node-without-gpu", _paste(name))


def test_live_nvidia_default_runtime_and_no_gpu_on_the_bus(tmp_path):
    got = _snapshot(tmp_path, {"PATH": "/usr/bin"},
                    {"/etc/docker/daemon.json": (K8S_52.read_text().split("```")[1]).strip() + "\n"}, [])
    assert got["default_runtime"] == {"docker": "nvidia", "containerd": None}
    cpu = facts("h100-kvm-1gpu", **{"containers.default_runtime": got["default_runtime"], "nvidia.pci_devices": 0})
    (f,) = fired("nvidia-runtime-on-node-without-gpu", cpu)
    assert f.severity == "warning" and "docker's default runtime" in f.message
    gpu = facts("h100-kvm-1gpu", **{"containers.default_runtime": got["default_runtime"], "nvidia.pci_devices": 1})
    assert not fired("nvidia-runtime-on-node-without-gpu", gpu)


def test_containerd_default_runtime_from_its_config(tmp_path):
    conf = '[plugins."io.containerd.grpc.v1.cri".containerd]\n      default_runtime_name = "nvidia"\n'
    assert _snapshot(tmp_path, {"PATH": "/usr/bin"}, {"/etc/containerd/config.toml": conf}, [])["default_runtime"] == {
        "docker": None, "containerd": "nvidia"}


def test_a_broken_daemon_json_is_unknown_not_a_pass(tmp_path):
    got = _snapshot(tmp_path, {"PATH": "/usr/bin"}, {"/etc/docker/daemon.json": "{not json"}, [])
    assert "not JSON" in str(got["default_runtime"]["docker"])


def test_enroots_own_not_enough_space_is_a_full_file_system():
    (example,) = [e for k, e in _examples("enroot", "disk-full")]
    (f,) = fired("disk-full", told_facts(example + "\n"))
    assert "a file system was full" in f.message and "/tmp" in f.message


def test_any_line_claiming_a_machine_without_a_gpu_reads_as_the_cpu_node(tmp_path):
    # the claim is the catalogue's (prose.toml claims = ["no-nvidia-gpu-on-machine"]), not this rule's list
    # of ids: K8S_52's "CPU node" words (edited in memory) replaced by "I have no GPU on this machine",
    # its "non-GPU node" by "any node"
    text = K8S_52.read_text(encoding="utf-8").replace("on CPU node", "and I have no GPU on this machine", 1)
    text = text.replace("on k8s CPU node,", "on k8s,", 1).replace("can run on non-GPU node", "can run on any node", 1)
    assert "prose:cpu-node-said" not in {s["id"] for s in find_messages(text)}
    g = ticket_file_facts(tmp_path, K8S_52, text)
    (f,) = fired("nvidia-runtime-on-node-without-gpu", g)
    assert "I have no GPU on this machine" in f.message


def test_a_program_run_on_the_cpu_is_not_a_node_without_a_gpu(tmp_path):
    text = K8S_52.read_text(encoding="utf-8").replace("on CPU node", "while I run it on CPU only", 1)
    text = text.replace("on k8s CPU node,", "on k8s,", 1).replace("can run on non-GPU node", "can run on any node", 1)
    g = ticket_file_facts(tmp_path, K8S_52, text)
    said = {s["id"]: s.get("claims") for s in find_messages(text)}
    assert not any("no-nvidia-gpu-on-machine" in (c or []) for c in said.values()), said
    assert not fired("nvidia-runtime-on-node-without-gpu", g)
