"""Pasted resource-limit listings (bash/zsh/dash ulimit -a, zsh/tcsh limit, /proc/PID/limits) read
into the limit facts checks/limits.py reads live (parse.rlimits): real public pastes listed in
tests/fixtures/pastes/SOURCES.md, and each shell's own output recorded on the development VM
(bash 5.2.15, zsh 5.9, dash 0.5.12, tcsh 6.24.07, Linux 6.x /proc/self/limits; soft limits lowered
to the figures below with `ulimit -S`). A listing alone finds nothing on fine values; a low one lets
the rules that judge it judge."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from hpcdoctor.parse.rlimits import START_PROC, START_SHELL, parse_limits
from rulekit import fired, paste_facts, recorded_paste_facts


def _lim(g, name):
    """The limit checks/limits.py recorded, or None where it is unknown."""
    return (g["facts"].get("limits") or {}).get(name)

KIB = 1024

# Each shell's own output on the development VM, cut to the five limits read and one they are not.
BASH = ("core file size              (blocks, -c) 0\n"
        "max locked memory           (kbytes, -l) 64\n"
        "open files                          (-n) 1024\n"
        "stack size                  (kbytes, -s) 8192\n"
        "max user processes                  (-u) 2000\n"
        "virtual memory              (kbytes, -v) unlimited\n")
ZSH = ("-s: stack size (kbytes)             8192\n"
       "-c: core file size (blocks)         0\n"
       "-u: processes                       2000\n"
       "-n: file descriptors                1024\n"
       "-l: locked-in-memory size (kbytes)  64\n"
       "-v: address space (kbytes)          unlimited\n")
DASH = ("stack(kbytes)        8192\n"
        "coredump(blocks)     0\n"
        "locked memory(kbytes) 64\n"
        "process              2000\n"
        "nofiles              1024\n"
        "vmemory(kbytes)      unlimited\n")
ZSH_LIMIT = ("stacksize       8MB\n"
             "coredumpsize    0kB\n"
             "maxproc         2000\n"
             "descriptors     1024\n"
             "memorylocked    64kB\n"
             "addressspace    unlimited\n")
TCSH_LIMIT = ("stacksize    8192 kbytes\n"
              "coredumpsize 0 kbytes\n"
              "vmemoryuse   unlimited\n"
              "descriptors  1024 \n"
              "memorylocked 64 kbytes\n"
              "maxproc      2000 \n")


@pytest.mark.parametrize("text", [BASH, ZSH, DASH, ZSH_LIMIT, TCSH_LIMIT], ids=["bash", "zsh", "dash", "zsh-limit", "tcsh-limit"])
def test_every_shell_listing_reads_the_same_soft_limits(text):
    got = parse_limits(text)
    assert {k: v["soft"] for k, v in got.items()} == {"nproc": 2000, "stack": 8192 * KIB, "memlock": 64 * KIB,
                                                       "nofile": 1024, "as": None}
    assert not any("hard" in v for v in got.values())   # a shell's listing shows one value
    assert all(START_SHELL.match(line) for line in text.splitlines() if "core" not in line)


def test_proc_limits_reads_soft_and_hard_in_bytes():
    text = (FIXTURES / "pastes" / "oshi-2215-proc-self-limits.txt").read_text(encoding="utf-8")
    got = parse_limits(text)
    assert got["nproc"]["soft"] == got["nproc"]["hard"] == 7610
    assert got["stack"]["soft"] == 8388608 and got["stack"]["hard"] is None
    assert got["memlock"]["soft"] == 258269184 and got["nofile"]["hard"] == 1048576
    assert got["as"]["soft"] is None
    assert START_PROC.match(text.splitlines()[1])


def test_a_limit_listed_twice_differently_is_unknown():
    # `ulimit -Sa` then `ulimit -Ha`: which one the job ran under is not said
    got = parse_limits(BASH + BASH.replace("(-u) 2000", "(-u) 4000"))
    assert "nproc" not in got and got["stack"]["soft"] == 8192 * KIB


def test_prose_and_near_misses_are_not_listings():
    for line in ("the process  2000 died", "process 5", "stacksize 8192", "max user processes 2000",
                 "* - nproc unlimited", "Max processes 2000"):
        assert not parse_limits(line), line
        assert not START_SHELL.match(line) and not START_PROC.match(line), line


def test_one_pasted_line_is_read_as_the_process_limit_and_finds_nothing(tmp_path):
    # set AE's smartos-live#663: "max user processes (-u) 2000" in an LX zone; 2000 is no fault by itself
    f = recorded_paste_facts("smartos-live-663-nproc-capped-by-zone-max-lwps.txt")
    assert _lim(f, "nproc") == {"soft": 2000, "form": "bash ulimit -a", "pasted": True}   # no hard limit: not shown
    assert _lim(f, "stack") is None and "does not show it" in f["unknown"]["limits.stack"]
    assert _lim(f, "memlock") is None
    assert not fired("nproc-limit-too-low", f)


def test_healthy_listings_find_nothing():
    for name in ("vmtouch-94-bash5-ulimit-a.txt", "oshi-2215-proc-self-limits.txt"):
        f = recorded_paste_facts(name)
        assert _lim(f, "stack")["soft"] == 8192 * KIB
        assert not fired("stack-limit-too-low", f) and not fired("nproc-limit-too-low", f)
        assert not fired("mpi-memlock-limit", f)


def test_ucx_enomem_with_the_users_ulimit_a_is_the_memlock_limit():
    f = recorded_paste_facts("ucx-8229-ibv-create-cq-ulimit-a-memlock-64.txt")
    assert _lim(f, "memlock")["soft"] == 64 * KIB
    (hit,) = fired("mpi-memlock-limit", f)
    assert "current: 64 kB" in hit.message


# UCX's lines of openucx/ucx#8229 with a /proc/self/limits filled in from the kernel's own format
# (fs/proc/base.c proc_pid_limits: "%-25s %-20s %-20s %-10s"); no public paste shows both.
_UCX = ("[1652739463.054681] [cn0022:4071024:0]        ib_iface.c:1035 UCX  ERROR ibv_create_cq(cqe=4096) failed: "
        "Cannot allocate memory\n")
_PROC = ("Limit                     Soft Limit           Hard Limit           Units     \n"
         "Max locked memory         {soft:<20} {soft:<20} bytes     \n")


def test_ucx_enomem_with_proc_limits_memlock_64k_fires(tmp_path):
    (hit,) = fired("mpi-memlock-limit", paste_facts(tmp_path, _UCX + _PROC.format(soft=65536)))
    assert "current: 64 kB" in hit.message


def test_ucx_enomem_with_proc_limits_memlock_unlimited_is_not_the_limit(tmp_path):
    assert not fired("mpi-memlock-limit", paste_facts(tmp_path, _UCX + _PROC.format(soft="unlimited")))


def test_a_low_pasted_stack_limit_is_judged_with_a_fix_that_runs(tmp_path):
    f = paste_facts(tmp_path, BASH.replace("(kbytes, -s) 8192", "(kbytes, -s) 4096"))
    (hit,) = fired("stack-limit-too-low", f)
    assert "4096 kB" in hit.message and "ulimit -s $(ulimit -Hs)" in hit.fix


def test_a_fine_pasted_stack_limit_is_silent(tmp_path):
    assert not fired("stack-limit-too-low", paste_facts(tmp_path, BASH))
