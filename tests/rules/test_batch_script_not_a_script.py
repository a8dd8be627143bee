"""batch-script-not-a-script on sbatch's refusals of the file it was given (src/sbatch/sbatch.c
_get_script_buffer at slurm-25-05-8-1, the same at 20.11): a real paste (signac-flow #575, a template
that indented the #! line) and sbatch's other refusals with their format strings filled in (no
public paste of them was found); silent on a script sbatch took and on DOS line endings, which are
batch-script-dos-line-endings'."""

from __future__ import annotations

from rulekit import fired, paste_facts, recorded_paste_facts, told_facts


def test_the_indented_shebang_of_a_template_is_refused():
    (f,) = fired("batch-script-not-a-script", recorded_paste_facts("signac-flow-575-sbatch-indented-shebang.txt"))
    assert "This does not look like a batch script" in f.message and "spaces before #!" in f.message
    assert f.severity == "error"
    assert f.fix.startswith("head -c 64 job.sh | od -c") and "sed -i '/[^[:space:]]/,$!d' job.sh" in f.fix
    assert "iconv -f UTF-16 -t UTF-8" in f.fix and "sed -i '1i #!/bin/bash' job.sh" in f.fix


def test_the_second_line_alone_as_a_thread_title_is_read():
    text = "[BUG] sbatch: error: line must start with #! followed by the path to an interpreter\n"
    (f,) = fired("batch-script-not-a-script", told_facts(text))
    assert "#! followed by an interpreter" in f.message


def test_an_empty_script_and_one_of_blanks_and_a_nul_byte_each_say_their_cause():
    (f,) = fired("batch-script-not-a-script", told_facts("sbatch: error: Batch script is empty!\n"))
    assert "0 bytes" in f.message and f.fix.startswith("wc -c job.sh")
    (f,) = fired("batch-script-not-a-script", told_facts("sbatch: error: Batch script contains only whitespace!\n"))
    assert "only blank characters" in f.message
    text = ("sbatch: error: The Slurm controller does not allow scripts that\n"
            "sbatch: error: contain a NULL character '\\0'.\n")
    (f,) = fired("batch-script-not-a-script", told_facts(text))
    assert "NUL byte" in f.message and "tr -d '\\000' < job.sh > job-clean.sh" in f.fix


def test_silent_on_a_script_sbatch_took_and_on_dos_line_endings(tmp_path):
    ok = "#!/bin/bash\n#SBATCH -n 1\nsrun hostname\nSubmitted batch job 1234\n"
    assert not fired("batch-script-not-a-script", paste_facts(tmp_path, ok))
    dos = ("sbatch: error: Batch script contains DOS line breaks (\\r\\n)\n"
           "sbatch: error: instead of expected UNIX line breaks (\\n).\n")
    assert not fired("batch-script-not-a-script", told_facts(dos))
    assert fired("batch-script-dos-line-endings", told_facts(dos))
