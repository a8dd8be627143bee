"""glibc's words as programs print them (knowledge/messages/errno.toml and loader.toml), replayed from
public pastes and recordings (tests/fixtures/pastes, SOURCES.md there): each is read as its entry,
an errno feeds a rule only where it alone states the fact (ENOSPC: disk-full), and a line another
family reads is not read again as a bare errno."""

from __future__ import annotations

import errno
import sys

import pytest

from rulekit import PASTES, fired, recorded_paste_facts
from hpcdoctor import engine
from hpcdoctor.facts import FactView
from hpcdoctor.knowledge import messages
from hpcdoctor.triage.messages import find_messages


def _read(name):
    return find_messages((PASTES / name).read_text(encoding="utf-8"))


def _alarms(name):
    """Every error or warning any rule raises on a recorded paste."""
    g = recorded_paste_facts(name)
    rules, _ = engine.load_rules()
    findings, _ = engine.evaluate(rules, FactView(g["facts"], g["unknown"], {}))
    return [f.symbol for f in findings if f.severity in ("error", "warning")]


@pytest.mark.parametrize("paste, sid, fields", [
    ("ms-swift-6695-errno-116-stale-file-handle.txt", "errno:ESTALE", {"errno": "116", "exception": "OSError"}),
    ("photon-191-errno-30-read-only-file-system.txt", "errno:EROFS", {"errno": "30"}),
    ("radiasoft-devops-196-bash-cd-stale-file-handle.txt", "errno:ESTALE", {}),
    ("rust-1.95-unwrap-io-error-enoent.txt", "errno:ENOENT", {"kind": "NotFound"}),
    ("furious-49-libicudata-elf-load-command-not-page-aligned.txt", "loader:load-command-not-page-aligned",
     {"file": "libicudata.so.73"}),
    ("jetbrainsruntime-366-libcef-elf-load-command-alignment.txt", "loader:load-command-alignment-not-page-aligned",
     {"file": "libcef.so"}),
    ("julia-12019-libjulia-cannot-restore-segment-prot.txt", "loader:cannot-restore-segment-prot",
     {"file": "/home/centos/buildbot/slave/package_tarball32/build/usr/bin/../lib/libjulia.so",
      "strerror": "Permission denied"}),
    ("debian12-ld-so-preload-ignored.txt", "loader:preload-ignored",
     {"file": "/nonexistent/libfoo.so", "where": "LD_PRELOAD", "reason": "cannot open shared object file"}),
])
def test_each_paste_is_read_as_its_entry(paste, sid, fields):
    got = [s for s in _read(paste) if s["id"] == sid]
    assert got, [s["id"] for s in _read(paste)]
    for key, value in fields.items():
        assert got[0].get(key) == value, (key, got[0])


def test_a_wrapped_loader_line_without_an_object_names_none():
    # "error while loading shared libraries: cannot make segment writable ...": the loader names no
    # object (the program itself), and the word before the colon is not one
    (s,) = [s for s in _read("paxrat-14-pulseaudio-cannot-make-segment-writable.txt") if s["family"] == "loader"]
    assert s["key"] == "cannot-make-segment-writable" and s.get("file") is None and s["strerror"] == "Permission denied"


@pytest.mark.parametrize("paste", ["julia-12019-libjulia-cannot-restore-segment-prot.txt",
                                   "paxrat-14-pulseaudio-cannot-make-segment-writable.txt"])
def test_a_line_the_loader_reads_is_not_read_again_as_its_errno(paste):
    got = _read(paste)
    assert "errno:EACCES" not in {s["id"] for s in got}
    # without the loader's words the same strerror is a bare EACCES
    assert [s["id"] for s in find_messages("cp: cannot open 'x' for reading: Permission denied\n")] == ["errno:EACCES"]


def test_an_strace_enospc_is_a_full_file_system():
    (f,) = fired("disk-full", recorded_paste_facts("debian12-strace-dd-dev-full-enospc.txt"))
    assert f.severity == "error" and "ENOSPC" in f.message and "df -i" in f.fix


def test_a_healthy_trace_full_of_enoent_raises_nothing():
    assert "errno:ENOENT" in {s["id"] for s in _read("debian12-strace-cat-healthy-enoent.txt")}
    assert _alarms("debian12-strace-cat-healthy-enoent.txt") == []


@pytest.mark.parametrize("paste", ["photon-191-errno-30-read-only-file-system.txt",
                                   "furious-49-libicudata-elf-load-command-not-page-aligned.txt",
                                   "debian12-ld-so-preload-ignored.txt"])
def test_an_errno_or_loader_message_no_rule_states_is_read_not_judged(paste):
    assert _read(paste) and _alarms(paste) == []


def _errno():
    (fam,) = messages.families(("errno",))
    return fam


def test_only_enospc_edquot_estale_enolck_and_enametoolong_feed_a_rule():
    fed = {e.key: e.get("rules") for e in _errno().entries if e.get("rules")}
    assert fed == {"ENOSPC": ["disk-full"], "EDQUOT": ["home-quota-exceeded"], "ESTALE": ["nfs-stale-file-handle"],
                   "ENOLCK": ["fs-file-locking-unsupported"],
                   # judged by the quoted name's length (rules/fs_support.py): info unless it marks a lower limit
                   "ENAMETOOLONG": ["fs-filename-length-limited"],
                   # the per-process open-files limit reached (rules/open_files.py): a warning
                   "EMFILE": ["open-files-limit-too-low"]}


@pytest.mark.parametrize("paste", ["ms-swift-6695-errno-116-stale-file-handle.txt",
                                   "radiasoft-devops-196-bash-cd-stale-file-handle.txt"])
def test_estale_as_python_and_bash_print_it_is_a_stale_handle(paste):
    assert [a for a in _alarms(paste) if "nfs-stale-file-handle" in str(a)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the errno numbers are Linux's")
def test_every_linux_errno_is_catalogued_under_its_number():
    fam = _errno()
    codes = {e.get("code") for e in fam.entries}
    assert {code for code in errno.errorcode if 0 < code < 512} <= codes
    named = [(e.key, e.get("code"), getattr(errno, e.key)) for e in fam.entries if hasattr(errno, e.key)]
    assert len(named) > 120 and all(code == number for _key, code, number in named), named


def test_the_rules_short_strerror_list_is_glibcs_own_words():
    # knowledge/glibc.toml [strerror] (what rules/_common.STRERROR accepts as a whole error) is a subset
    # of the texts errno.toml read from glibc's errlist.h
    from hpcdoctor import knowledge

    texts = set(knowledge.load("glibc")["strerror"]["texts"])
    assert texts and texts <= {e.get("message") for e in _errno().entries}


@pytest.mark.parametrize("ticket, sid", [
    ("tickets_blind_g/masktextspotterv3-51-too-many-open-files-ulimit.txt", "torch:python-emfile"),
    ("tickets_blind_f/fslr-14-openblas-rlimit-nproc.txt", "threads:openblas-pthread-create-failed-old"),
])
def test_words_another_family_read_are_not_read_again_as_a_bare_errno_on_a_later_line(ticket, sid):
    # the title retells the error and the traceback (or the prose) repeats it further down
    text = (PASTES.parent / ticket).read_text(encoding="utf-8", errors="replace")
    ids = [s["id"] for s in find_messages(text)]
    assert sid in ids and not [i for i in ids if i.startswith("errno:")], ids
