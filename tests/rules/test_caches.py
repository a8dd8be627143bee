"""cache-dir-not-writable on public pastes (tests/fixtures/pastes, SOURCES.md there): each library's
own words, and Python's errno line on a path that is a library's cache."""

from __future__ import annotations

import pytest

from rulekit import facts, fired, recorded_paste_facts, told_facts, told_paste_facts
from hpcdoctor.triage.messages import find_messages



@pytest.mark.parametrize("paste, path, variable", [
    ("transformers-13472-cache-dir-not-writable.txt", "/.cache", 'export XDG_CACHE_HOME="${TMPDIR:-/tmp}/$USER/cache" && mkdir -p "$XDG_CACHE_HOME"   #'),
    ("private-gpt-1876-hf-cache-nonexistent-home.txt", "/nonexistent/.cache/huggingface/hub", 'HF_HOME="${TMPDIR:-/tmp}/$USER/cache/huggingface"'),
    ("kohya-ss-1143-hf-cache-other-uid.txt", "/home/appuser/.cache/huggingface", "HF_HOME="),
    ("harbor-262-hf-hub-cache-permission.txt", "/root/.cache/huggingface/hub", "HF_HOME="),
])
def test_a_cache_the_job_cannot_write_is_an_error(paste, path, variable):
    (f,) = fired("cache-dir-not-writable", recorded_paste_facts(paste))
    assert f.severity == "error" and f"the cache directory {path} is not writable" in f.message
    assert variable in f.fix and f.fix.startswith("id; echo \"HOME=$HOME\"")


def test_a_home_of_slash_or_nonexistent_is_named():
    for paste in ("transformers-13472-cache-dir-not-writable.txt", "private-gpt-1876-hf-cache-nonexistent-home.txt"):
        (f,) = fired("cache-dir-not-writable", recorded_paste_facts(paste))
        assert "a user without a home directory" in f.message
    (f,) = fired("cache-dir-not-writable", recorded_paste_facts("kohya-ss-1143-hf-cache-other-uid.txt"))
    assert "without a home directory" not in f.message


def test_a_library_that_goes_on_without_its_cache_is_a_warning():
    (f,) = fired("cache-dir-not-writable", recorded_paste_facts("fermibottle-8-matplotlib-config-not-writable.txt"))
    assert f.severity == "warning" and "/home/fermi/.config/matplotlib" in f.message and "MPLCONFIGDIR=" in f.fix
    # pip's own format string (base_command.py), the path filled in
    text = ("WARNING: The directory '/home/user/.cache/pip' or its parent directory is not owned or is not writable by the "
            "current user. The cache has been disabled. Check the permissions and owner of that directory. If executing pip "
            "with sudo, you should use sudo's -H flag.\n")
    (f,) = fired("cache-dir-not-writable", told_facts(text))
    assert f.severity == "warning" and 'PIP_CACHE_DIR="${TMPDIR:-/tmp}/$USER/cache/pip"' in f.fix


def test_a_full_quota_under_the_hub_is_not_a_permission():
    # huggingface_hub's line with errno 122: the home-quota rules', not this one
    text = ("Ignored error while writing commit hash to /home/u/hf_cache/hub/models--x/refs/main: [Errno 122] Disk quota "
            "exceeded: '/home/u/hf_cache/hub/models--x/refs'.\n")
    assert "caches:hub-ignored-error-writing" in {s["id"] for s in find_messages(text)}
    assert not fired("cache-dir-not-writable", told_facts(text))


def test_a_permission_on_the_jobs_own_data_is_not_a_cache():
    assert not fired("cache-dir-not-writable", recorded_paste_facts("pytorch-9124-pip-untrusted-http-index.txt"))
    assert not fired("cache-dir-not-writable", told_facts("PermissionError: [Errno 13] Permission denied: '/scratch/proj/out/model.pt'\n"))
    assert not fired("cache-dir-not-writable", told_facts("Could not create lock at /var/run/yum.pid: [Errno 30] Read-only file system: '/var/run/yum.pid'\n"))


def test_the_limits_probe_marks_a_cache_directory_it_may_not_write(tmp_path, monkeypatch):
    from hpcdoctor.checks import limits

    cache = tmp_path / "ro" / ".cache" / "huggingface"
    (tmp_path / "ro").mkdir()
    # access(2) answers for the nearest existing parent: refuse that one alone (root may write anything)
    real = limits.os.access
    monkeypatch.setattr(limits.os, "access", lambda p, m: False if str(p) == str(tmp_path / "ro") else real(p, m))
    records = limits.statvfs_dirs([("HF_HOME", str(cache)), ("TMPDIR", str(tmp_path))])
    assert [str(cache)] == [p for r in records for p in r.get("unwritable", [])]
    assert limits._filesystems(records)[0]["unwritable"] == [str(cache)]
    # a recording made before the field existed keeps it absent, never "all writable"
    assert "unwritable" not in limits._filesystems([{"roles": ["HOME"], "paths": ["/home/u"]}])[0]


def test_a_resolved_cache_directory_this_user_may_not_write_is_a_warning():
    fs = [{"roles": ["HOME", "HF_HOME"], "paths": ["/home/u", "/home/u/.cache/huggingface"],
           "unwritable": ["/home/u/.cache/huggingface"], "options": ["rw", "relatime"]}]
    (f,) = fired("cache-dir-not-writable", facts("h100-kvm-1gpu", **{"limits.filesystems": fs}))
    assert f.severity == "warning" and "the HF_HOME cache directory /home/u/.cache/huggingface" in f.message
    assert 'export HF_HOME="${TMPDIR:-/tmp}/$USER/cache/hf_home"' in f.fix
    # HOME itself, or nothing unwritable: silent
    fs[0]["unwritable"] = ["/home/u"]
    assert not fired("cache-dir-not-writable", facts("h100-kvm-1gpu", **{"limits.filesystems": fs}))
    fs[0]["unwritable"] = []
    assert not fired("cache-dir-not-writable", facts("h100-kvm-1gpu", **{"limits.filesystems": fs}))


# numba's cache=True (caches.toml numba-no-locator): the file named is the source whose cache found no
# writable place, so the fix is NUMBA_CACHE_DIR, not the file's directory.
def test_numba_no_locator_is_an_error_with_numba_cache_dir():
    (f,) = fired("cache-dir-not-writable", recorded_paste_facts("outlines-983-numba-no-locator-dist-packages.txt"))
    assert f.severity == "error" and "/usr/local/lib/python3.10/dist-packages/outlines/fsm/regex.py" in f.message
    assert "export NUMBA_CACHE_DIR=" in f.fix


def test_numba_refusal_cut_before_its_file_is_a_warning():
    (f,) = fired("cache-dir-not-writable", told_paste_facts("librosa-1099-numba-cannot-cache-traceback.txt"))
    assert f.severity == "warning" and "retold without its file" in f.message and "NUMBA_CACHE_DIR" in f.fix


@pytest.mark.parametrize("paste, severity", [
    ("../tickets_blind_t/montblanc-253-numba-cache-dir-not-writable.txt", "error"),   # set T, unsealed
    ("../tickets_blind_t/vectorbt-476-numba-cache-dir-not-writable-container.txt", "warning"),   # its title only
])
def test_set_t_numba_cache_pastes(paste, severity):
    (f,) = fired("cache-dir-not-writable", recorded_paste_facts(paste))
    assert f.severity == severity and "NUMBA_CACHE_DIR" in f.fix
