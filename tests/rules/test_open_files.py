"""open-files-limit-too-low (rules/open_files.py): EMFILE in each emitter's words, on real public
pastes and outputs recorded on the development VM under a lowered ulimit -n (tests/fixtures/pastes,
SOURCES.md there), V's tickets, and near misses that must stay silent."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulekit import fired, paste_facts, recorded_paste_facts, run_rule

BLIND_V = Path(__file__).resolve().parent.parent / "fixtures" / "tickets_blind_v"


@pytest.mark.parametrize("paste", ["emfile-recorded-java.txt", "emfile-recorded-node.txt", "emfile-recorded-rust.txt",
                                   "emfile-recorded-bash.txt", "emfile-go-sia-2935.txt", "emfile-openmpi-sowfa-8.txt",
                                   # SeaDrive's "%s:%s" puts no space after the colon (set AA)
                                   "../tickets_blind_aa/seadrive-gui-172-user-nofile-limit.txt"])
def test_emfile_in_each_emitters_words_is_a_warning(paste):
    (f,) = fired("open-files-limit-too-low", recorded_paste_facts(paste))
    assert f.severity == "warning" and "open-files limit" in f.message
    assert 'ulimit -n "$(ulimit -Hn)"' in f.fix and "--propagate=NOFILE" in f.fix


@pytest.mark.parametrize("text", [
    "2024/01/05 10:00:00 [crit] 1234#0: accept4() failed (24: Too many open files)\n",   # nginx ngx_log_errno, filled in
    "OSError: [Errno 24] Too many open files: '/etc/hostname'\n",   # CPython, recorded on the development VM
    "./perror_all: /scratch/out.dat: Too many open files\n",   # glibc perror, recorded on the development VM
])
def test_emfile_formats(tmp_path, text):
    (f,) = fired("open-files-limit-too-low", paste_facts(tmp_path, text))
    assert f.severity == "warning"


def test_orthofinder_names_its_need_and_is_an_error():
    text = (BLIND_V / "orthofinder-581-open-files-limit-too-low.txt").read_text(encoding="utf-8")
    f = fired("open-files-limit-too-low", paste_facts_text(text))[0]
    assert f.severity == "error" and "2701" in f.message and f.fix.startswith("ulimit -n 2701")


def test_orthofinder_older_wording_without_the_count():
    (f,) = fired("open-files-limit-too-low", recorded_paste_facts("orthofinder-646-open-files-limit-old-wording.txt"))
    assert f.severity == "error" and not f.fix.startswith("ulimit -n 2")


def test_a_users_reading_of_ulimit_is_info_only():
    text = (BLIND_V / "mantis-14-open-files-limit-1024.txt").read_text(encoding="utf-8")
    (f,) = fired("open-files-limit-too-low", paste_facts_text(text))
    assert f.severity == "info" and "1024" in f.message


def test_the_bash_listing_is_quoted_beside_an_emfile(tmp_path):
    text = "open files                          (-n) 1024\nbash: line 1: /etc/hostname: Too many open files\n"
    (f,) = fired("open-files-limit-too-low", paste_facts(tmp_path, text))
    assert "open-files limit of 1024" in f.message


@pytest.mark.parametrize("text", [
    "open files                          (-n) 1024\n",   # a listing alone: no failure
    "open /var/lib/app/data.db: too many open files in system\n",   # Go's ENFILE: fs.file-max, not ulimit -n
    "2024/01/05 10:00:00 [crit] 1234#0: accept4() failed (23: Too many open files in system)\n",   # nginx's ENFILE
    "failed to create fsnotify watcher: too many open files\n",   # inotify instances, not ulimit -n
    "I checked and for me ulimit -Sn says 65536.\n",   # a user's reading of a limit that is not low
    "RuntimeError: Too many open files. Communication with the workers is no longer possible. Please increase the limit "
    "using `ulimit -n` in the shell or change the sharing strategy by calling "
    "`torch.multiprocessing.set_sharing_strategy('file_system')` at the beginning of your code\n",   # MEM004's
])
def test_silent_on_near_misses(tmp_path, text):
    assert not fired("open-files-limit-too-low", paste_facts(tmp_path, text))


def paste_facts_text(text):
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        return paste_facts(Path(d), text)


# torch's shm_open of a shared tensor (torch.toml shm-open-failed) with EMFILE is this limit; the same
# words with no errno (older torch) or another one are not, by the words alone.
def test_torchs_shared_tensor_refused_with_emfile_is_the_open_files_limit():
    (hit,) = fired("open-files-limit-too-low", recorded_paste_facts("smdm-3-torch-shm-open-emfile.txt"))
    assert "reached its open-files limit" in hit.message and "set_sharing_strategy('file_system')" in hit.fix


def test_torchs_shared_tensor_refused_without_an_errno_is_not_said_to_be_the_limit():
    findings, _ = run_rule("open-files-limit-too-low", recorded_paste_facts("mmaction2-218-torch-shm-open-no-errno.txt"))
    assert findings == []   # not fired("open-files-limit-too-low" on words that name no errno
