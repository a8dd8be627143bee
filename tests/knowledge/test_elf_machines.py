"""knowledge/elf_machines.toml against the real file(1) and uname of the machine the tests run on:
file's name for this interpreter's own binary and uname -m must come to the same machine, whatever
that machine is (x86-64, aarch64, ...)."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys

import pytest

from hpcdoctor import knowledge
from hpcdoctor.triage.messages import find_messages

TABLE = knowledge.load("elf_machines")


def test_file_and_uname_of_this_machine_name_the_same_machine():
    tool = shutil.which("file")
    if tool is None:
        pytest.skip("file(1) is not installed (not a test requirement)")
    binary = os.path.realpath(sys.executable)
    out = subprocess.run([tool, "-L", binary], capture_output=True, text=True, timeout=20).stdout
    said = [s for s in find_messages(out) if s.get("id") == "executables:file-elf-machine"]
    assert said, f"file(1)'s description was not read: {out!r}"
    machine = said[0]["machine"]
    assert TABLE["file_elf_machine"]["names"][machine] == TABLE["uname_machine"]["names"][platform.machine()]


def test_every_file_name_in_the_table_is_read_by_the_catalogue():
    # the catalogue's pattern and the table list the same names: a name only one of them knows is lost
    for name in TABLE["file_elf_machine"]["names"]:
        line = f"./app: ELF 64-bit LSB executable, {name}, version 1 (SYSV), dynamically linked"
        said = [s for s in find_messages(line) if s.get("id") == "executables:file-elf-machine"]
        assert [s["machine"] for s in said] == [name]


def test_the_machines_file_names_are_machines_uname_names():
    assert set(TABLE["file_elf_machine"]["names"].values()) <= set(TABLE["uname_machine"]["names"].values())
