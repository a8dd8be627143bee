"""Error lines of programs no catalogue lists (knowledge/messages/errorlines.toml), replayed from
public pastes (tests/fixtures/pastes, SOURCES.md there) through `hpcdoctor check --from`: each is
read, quoted back with its emitter named, and the paste is answered instead of refused (issue 24);
an error-line convention fires no rule, a line a specific family reads stays that family's, and
prose that only speaks of errors is not taken for an error line."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, check_from
from hpcdoctor.knowledge import messages
from hpcdoctor.triage.messages import find_messages, find_unlisted_errors

PASTES = FIXTURES / "pastes"

# (paste, [(line, emitter the reply names)]); every paste is a public ticket's text, verbatim
CASES = [
    ("sierrabreeze-17-gcc-error-make.txt",
     [(1, "a GCC/Clang compiler diagnostic"), (2, "a GNU make error"), (4, "a GNU make error")]),
    ("mxnet-2656-ld-cannot-find-lcuda.txt",
     [(1, "a linker (GNU ld) error"), (2, "a GCC/Clang driver or collect2 error"), (3, "a GNU make error")]),
    ("nccl-87-nvcc-identifier-undefined.txt", [(2, "an nvcc (CUDA front end) compiler diagnostic")]),
    ("instant-ngp-781-cmake-error.txt", [(3, "a CMake error"), (12, "a CMake error")]),
    ("fast-rcnn-163-glog-check-failed.txt",
     [(1, "a glog/klog ERROR or FATAL log line"), (2, "glog's CHECK failure")]),
    ("moby-34091-dockerd-logrus-erro.txt", [(6, "a Go logrus log line at level error or fatal (terminal format)")]),
    ("docker-library-250-dockerd-level-error.txt", [(1, "a Go logrus log line at level error or fatal")]),
    ("pggb-373-apptainer-fatal-resolv-conf.txt", [(4, "an Apptainer/Singularity FATAL or ERROR line")]),
    ("ont-assembly-polish-26-docker-pull-denied.txt", [(1, "a Docker daemon error")]),
    ("guard-352-kubectl-forbidden.txt", [(2, "a Kubernetes API server error (kubectl)")]),
    ("nvidia-docker-716-apt-unable-to-locate.txt", [(5, "an apt error")]),
    ("mockingbird-770-pip-resolver-conflicts.txt", [(1, "an 'ERROR: ' line (the prefix of pip and Environment Modules)")]),
    ("ollama-11932-systemd-persistenced-failed.txt", [(2, "a systemd unit failure"), (3, "a systemd unit failure")]),
    ("grmon-8-go-panic-nil-pointer.txt", [(1, "a Go panic")]),
    ("uwd2-12-rust-panic-unwrap-none.txt", [(1, "a Rust panic")]),
    ("rust-koans-58-rustc-e0425.txt", [(5, "a rustc compiler error")]),
    ("hmmratac-57-java-heap-space.txt", [(1, "an uncaught Java exception")]),
    ("rhea-14-r-error-in-pam.txt", [(1, "an R error")]),
    ("cacti-10-gdb-sigfpe-backtrace.txt", [(9, "GDB's report of a signal in the program it debugs")]),
    # Spack's build-log excerpt numbers each line ("  >> 357    ", "     362    ") before the program's own
    ("loci-342-spack-build-excerpt-gcc-error.txt",
     [(6, "a GCC/Clang compiler diagnostic"), (10, "a GNU make error"), (11, "a GNU make error")]),
    ("matconvnet-660-matlab-gpudevice.txt", [(1, "a MATLAB error")]),
    ("vinayaka-182-cxx-terminate-runtime-error.txt", [(2, "a C++ program terminated (std::terminate)")]),
    ("openpose-2027-glibc-mutex-assert.txt", [(1, "a failed C assert() (glibc)")]),
    ("batmeth2-42-stack-smashing.txt", [(2, "a glibc fortify abort (stack smashing or buffer overflow)")]),
    ("shell-gpt-320-free-invalid-pointer.txt", [(4, "a glibc heap corruption abort (malloc_printerr)")]),
    ("njoy-22-gfortran-array-bound.txt", [(2, "a gfortran runtime error")]),
    ("nga2-13-gfortran-sigsegv.txt", [(1, "a gfortran program killed by a signal")]),
    ("fds-6713-forrtl-severe-174.txt", [(1, "an Intel Fortran runtime error (forrtl)")]),
    ("cloud-custodian-1236-dash-source-not-found.txt",
     [(1, "a shell's 'not found' (dash/sh)"), (2, "a GNU make error")]),
    ("flownet3d-11-ninja-failed.txt", [(2, "a ninja build step that failed")]),
    ("cuda-jl-2453-julia-loaderror.txt", [(1, "a Julia error")]),
    ("stratisd-812-xfs-shutdown-pre-5.15.txt", [(2, "a kernel log line naming a failure")]),
    ("trinity-759-munge-decode-invalid-credential.txt", [(4, "a system log line of a daemon naming a failure")]),
    ("pointcept-12-nvcc-cicc-killed-error-compiling-objects.txt",
     [(6, "a program's error or warning line ('program: warning: ', the GNU convention)")]),
    ("plann-10-perl-cant-locate-blast-pm.txt", [(5, "a Perl die or warn message"), (6, "a Perl die or warn message")]),
    ("hard-11-spack-all-fetchers-failed.txt", [(6, "a Spack error")]),
    ("node-globaloffensive-64-node-cannot-find-module.txt",
     [(10, "an 'Error: ' line (the prefix of Node.js's uncaught errors, Cobra commands and others)")]),
    ("offline-vm-git-clone.txt", [(3, "an 'error: ' or 'fatal: ' line (git's convention, and programs that follow it)")]),
    ("aiida-qe-1001-qe-errore-fft-grid.txt", [(6, "a Quantum ESPRESSO error (errore)")]),
    ("openfoam-app-333-foam-fatal-dummy-pstream.txt", [(18, "an OpenFOAM fatal error")]),
    ("pi-wrf-11-wrf-fatal-called-wrfinput.txt", [(4, "a WRF/WPS fatal error (wrf_error_fatal)")]),
    ("lammps-user-conp2-30-lammps-error-boolean.txt", [(8, "a LAMMPS error")]),
]


@pytest.mark.parametrize("paste, quoted", CASES, ids=[c[0].split(".")[0] for c in CASES])
def test_each_paste_is_answered_with_its_error_lines_quoted_back(paste, quoted):
    run = check_from(PASTES / paste)
    assert run["rc"] != 2 and run["doc"] is not None, run["stderr"]
    said = run["doc"]["source"]["recognised"]
    for line, emitter in quoted:
        want = f"line {line}: {emitter}, not in hpcdoctor's catalogue: "
        # or read by the emitter's own catalogue (apptainer.toml, fortran.toml, shell.toml), which a
        # generic convention yields the line to
        mine = [r for r in said if f": line {line}: " in r or r.startswith(f"line {line}: ")]
        assert any(want in r for r in said) or (mine and not any("not in hpcdoctor's catalogue" in r for r in mine)), (want, said)


def _other_reads(text):
    """What the paste holds for every family but errorlines, and the generic error lines."""
    others = tuple(f.id for f in messages.families() if f.id != "errorlines")
    found = find_messages(text, others)
    return found + find_unlisted_errors(text, found)


# The pastes nothing but an error-line convention reads: refused before errorlines.toml (exit 2,
# "nothing hpcdoctor can read"), and answered now without any finding, since a convention says a
# line is an error, never what the error establishes.
ONLY_ERROR_LINES = [c[0] for c in CASES if not _other_reads((PASTES / c[0]).read_text(encoding="utf-8"))]


def test_most_of_these_pastes_were_refused_before():
    # 17 of 32: shell_gpt#320's "free(): invalid pointer" is read by glibc's own heap-abort catalogue
    # (glibc_malloc.toml) since it was built, which the generic convention yields the line to; mxnet#2656's
    # "/usr/bin/ld: cannot find -lcuda" by linker.toml's -lcuda entry (read, no rule: a link line alone);
    # guard#352's "kubectl get pods" command line by kubectl_pods.toml
    assert len(ONLY_ERROR_LINES) >= 17, ONLY_ERROR_LINES
    assert "shell-gpt-320-free-invalid-pointer.txt" not in ONLY_ERROR_LINES
    assert "mxnet-2656-ld-cannot-find-lcuda.txt" not in ONLY_ERROR_LINES


@pytest.mark.parametrize("paste", ONLY_ERROR_LINES)
def test_an_error_line_convention_fires_no_rule(paste):
    run = check_from(PASTES / paste)
    assert [f["symbol"] for f in run["doc"]["findings"] if f["severity"] in ("error", "warning", "info")] == []


def test_a_line_a_specific_family_reads_stays_that_familys():
    # GCC's "fatal error: cuda_runtime.h: No such file or directory" is build.toml's (a CUDA header),
    # not errno's generic reading of its strerror text; setuptools' "error: command 'nvcc' failed" and
    # make's line below it are errorlines'
    text = (PASTES / "mmdetection-71-cuda-runtime-h-missing.txt").read_text(encoding="utf-8")
    got = {s["line"]: s["id"] for s in find_messages(text)}
    assert got == {2: "build:gcc-cuda-include-missing", 6: "errorlines:unlisted", 7: "errorlines:unlisted"}
    # pip's own catalogue keeps the lines it knows; the 'ERROR: ' line it has no entry for is quoted
    text = (PASTES / "mockingbird-770-pip-resolver-conflicts.txt").read_text(encoding="utf-8")
    got = {s["line"]: s["id"] for s in find_messages(text)}
    assert got[1] == "errorlines:unlisted" and got[2].startswith("pip:") and got[4].startswith("pip:")


def test_one_line_is_read_once_by_the_first_form_that_matches():
    # Julia's "ERROR: " line (its Stacktrace: below) is not pip's "ERROR: " line as well
    text = (PASTES / "cuda-jl-2453-julia-loaderror.txt").read_text(encoding="utf-8")
    got = [(s["line"], s.get("form")) for s in find_messages(text) if s["family"] == "errorlines"]
    assert got == [(1, "julia-error")]


def test_a_message_a_family_read_is_not_quoted_again_where_the_log_repeats_it():
    # EDAC's corrected-error line twice, with another timestamp and count: edac.toml reads the
    # first, and the second is the same message, not an uncatalogued one
    text = (PASTES / "osm-operations-300-host-dram-ecc-ce.txt").read_text(encoding="utf-8")
    got = find_messages(text)
    assert any(s["family"] == "edac" for s in got)
    assert [s["line"] for s in got if s.get("unlisted")] == []


def test_ordinary_kernel_and_daemon_lines_are_not_error_lines():
    # real log lines with no failure in them: the kernel and daemon forms need a failure word, not
    # only the log's prefix
    for paste, line in (("bigdata-133-nvrm-probe-nouveau.txt",
                         "[188549.975172] nvidia-nvlink: Nvlink Core is being initialized, major device number 239"),
                        ("mcelog-70-machine-check-events-logged.txt",
                         "Sep 16 19:51:15 mcelog[987]: mcelog: Cannot open /dev/mem for DMI decoding: Operation not permitted")):
        assert line in (PASTES / paste).read_text(encoding="utf-8")
        assert [s for s in find_messages(line) if s["family"] == "errorlines"] == [], line


# Sentences users write about errors, and words of the conventions out of place: none is an error
# line (these are written for the test, as hostile input is: the point is what must NOT be read).
PROSE = [
    "I get an error: the training stops after a few steps and I do not know why.",
    "The build failed with an error in the make step, something like Error 2 at the end.",
    "Error in my job script: I think the time limit is too short, any ideas?",
    "My question: E: is that the drive letter it wants?",
    "Our cluster had a panic: the scheduler was down for an hour yesterday.",
    "It said ERROR: and then nothing else, so I restarted it.",
    "The log shows level=error sometimes, but the jobs finish.",
    "Failed to start the training on the new nodes, but it works on the old ones.",
    "Error using the GPU version, the CPU version works fine.",
    "We saw a FATAL: message once, but it went away after a reboot.",
    "Is a double free or corruption possible in Python code?",
    "Error when trying to reproduce the result from the pretrained model",
    "I looked at the log line 51 and at the error in it.",
    "The fatal thing is that it fails at random, at line 3 of my script.",
]


@pytest.mark.parametrize("sentence", PROSE)
def test_prose_about_errors_is_not_an_error_line(sentence):
    assert [s for s in find_messages(sentence) if s["family"] == "errorlines"] == []


def test_a_paste_of_such_prose_is_still_refused(tmp_path):
    paste = tmp_path / "prose.txt"
    paste.write_text("\n".join(PROSE) + "\n", encoding="utf-8")
    run = check_from(paste)
    assert run["rc"] == 2 and "nothing hpcdoctor can read" in run["stderr"], run


def test_a_convention_behind_markdown_decoration_is_still_read():
    # a Markdown heading or a back-quoted line still starts with the program's own prefix: spack's
    # "==> Error: " as a title, a Node.js error in `...`
    for line in ("# ==> Error: FetchError: All fetchers failed for spack-stage-flecsolve-main-xofrvqt3br73bxjor66ma3ps3ib5h77z",
                 "`Error: Cannot find module '/root/node_modules/csgobot/standalonenew.js'`"):
        assert [s.get("form") for s in find_messages(line) if s["family"] == "errorlines"] in (["spack-error"], ["error-prefix"]), line


def test_an_exception_line_behind_pytests_e_column_is_quoted_back():
    # pytest prints a failure's exception behind "E" and its indentation (openkim/kliff#210, verbatim):
    # the line is read, not the paste refused
    run = check_from(PASTES / "kliff-210-weights-only-unsupported-global.txt")
    assert run["rc"] != 2, run["stderr"]
    said = run["doc"]["source"]["recognised"]
    assert any("line 6: not in hpcdoctor's catalogue: E" in r and "_pickle.UnpicklingError: Weights only load failed" in r
               for r in said), said


@pytest.mark.parametrize("paste, said", [
    ("aiida-qe-1001-qe-errore-fft-grid.txt", "FFT grid incompatible with symmetry"),
    ("openfoam-app-333-foam-fatal-dummy-pstream.txt", "The dummy Pstream library cannot be used in parallel mode"),
    ("pi-wrf-11-wrf-fatal-called-wrfinput.txt", "program wrf: error opening wrfinput_d01 for reading"),
])
def test_a_block_whose_message_is_on_the_next_line_quotes_the_message(paste, said):
    # QE's, OpenFOAM's and WRF's blocks print a header line, then the message: the reply gives both
    run = check_from(PASTES / paste)
    assert any("not in hpcdoctor's catalogue" in r and said in r for r in run["doc"]["source"]["recognised"]), \
        run["doc"]["source"]["recognised"]
