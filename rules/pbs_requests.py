"""A PBS resource request written in a dialect the server refuses: chunk requests (-l select=...)
at a site whose PBS takes only job-wide -l ncpus and -l mem, or TORQUE's nodes=N:ppn=M
(knowledge/messages/pbs_requests.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import first_catalogued, told_evidence, told_text

SYMBOL = "pbs-select-syntax-unsupported"


@rule("ENV096", SYMBOL, "error", "qsub refused '-l select': this PBS server takes another resource syntax", impact=5)
def pbs_select_syntax_unsupported(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a qsub that refused a chunk request: "qsub: Error: The system doesn't
        support the use of "-l select". Please use "-l ncpus" and "-l mem" instead." (a site
        whose PBS Pro has select switched off, NCI's Gadi among them). The message states the
        fault, so it is an error.

    Why it matters:
        Workflow tools (dpdispatcher, dask-jobqueue, Nextflow's pbspro executor) write
        "#PBS -l select=1:ncpus=N:mem=X" because OpenPBS and PBS Pro take chunks; TORQUE takes
        "-l nodes=N:ppn=M", and some sites accept only job-wide "-l ncpus" and "-l mem". The
        job is never queued until the template speaks the server's dialect.

    How to fix:
        Rewrite the resource lines of the tool's job template: this site's form
        "#PBS -l ncpus=N" and "#PBS -l mem=X"; on TORQUE "#PBS -l nodes=1:ppn=N" and
        "#PBS -l mem=X". Check which the site documents (qstat -Bf shows the server's
        default_chunk and resources_default where select exists).

    References:
        - https://github.com/nextflow-io/nextflow/issues/1970 (NCI configures PBS without select)
        - https://github.com/deepmodeling/dpdispatcher/issues/406
        - https://github.com/openpbs/openpbs/blob/cd7ab5edaf03dcac2f1cb9e2f42d75eb117d468a/src/lib/Liblog/pbs_messages.c (PBS's own refusals of the other dialect)
        - https://docs.adaptivecomputing.com/torque/4-0-2/Content/topics/2-jobs/requestingRes.htm (TORQUE's nodes=N:ppn=M)
    """
    s = first_catalogued(f, SYMBOL)
    if s is None:
        return
    yield Hit(message=f"line {s.get('line')}: \"{str(s.get('matched') or told_text(s))[:120]}\": this site's qsub refuses chunk requests (-l select=...); "
                      "its PBS takes job-wide -l ncpus and -l mem. The job template (the workflow tool's PBS "
                      "resource line) must be rewritten",
              fix=("grep -n '^#PBS -l' job.sh   # the resource lines the tool wrote (its job script; dpdispatcher's .sub, dask-jobqueue's job_script())\n"
                   "sed -i -E 's/^#PBS -l select=[0-9]+:ncpus=([0-9]+).*/#PBS -l ncpus=\\1/' job.sh   "
                   "# select=1:ncpus=N:... becomes '-l ncpus=N'; add a line '#PBS -l mem=' with the job's memory (e.g. 64GB)\n"
                   "qsub job.sh   # resubmit; then put the same two lines in the tool's template (dpdispatcher: resources' custom_flags, "
                   "dask-jobqueue: job_directives_skip=['select'] with job_extra_directives)\n"
                   "# a TORQUE server takes '#PBS -l nodes=1:ppn=N' instead; the site's documentation names its form"),
              evidence=told_evidence(s))
