"""A PBS resource request the server refuses: written in a dialect it does not take (chunk requests,
-l select=..., at a site whose PBS takes only job-wide -l ncpus and -l mem, or TORQUE's nodes=N:ppn=M),
or naming a resource it does not define (knowledge/messages/pbs_requests.toml)."""

from __future__ import annotations

import shlex
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


@rule("ENV140", "pbs-resource-unknown", "error", "qsub refused a resource this PBS server does not define", impact=5)
def pbs_resource_unknown(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, OpenPBS / PBS Pro refusing a job for a resource it does not define, by
        name: "qsub: Unknown resource: AMD" (the server appends the name to PBSE_UNKRESC's text,
        reply_send.c); qalter, qrun and pbs_rsub print the same.

    Why it matters:
        Resources other than the built-in ones (ncpus, mem, walltime, ngpus ...) are each site's
        own, defined by its administrators; a job template written at another site (a CPU kind, a
        GPU model, a node property) names one this server has never heard of, and the job is never
        queued. Nothing on the node is wrong.

    How to fix:
        Find the line of the job script (or of the workflow tool's PBS template) that asks for the
        resource and remove it, or rename it to the resource this site uses for the same thing:
        pbsnodes -av lists what the nodes offer (resources_available.*), and the site's
        documentation names its custom resources.

    References:
        - https://github.com/openpbs/openpbs/blob/cd7ab5edaf03dcac2f1cb9e2f42d75eb117d468a/src/server/reply_send.c (PBSE_UNKRESC with the resource's name)
        - https://github.com/openpbs/openpbs/blob/cd7ab5edaf03dcac2f1cb9e2f42d75eb117d468a/src/server/req_quejob.c (a select chunk's unknown keyword)
        - https://github.com/aidenlab/juicer/issues/162 (PBS scripts asking for AMD at a site without it)
    """
    s = first_catalogued(f, "pbs-resource-unknown")
    if s is None:
        return
    name = str(s.get("resource") or "")
    word = shlex.quote(name)
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": this PBS server defines no resource named {name}, and "
                      f"the job asks for one: the job script or the tool's PBS template was written for another site's "
                      "resources (a CPU kind, a GPU model, a node property)",
              fix=(f"grep -n -w -- {word} job.sh   # the request naming it: a '#PBS -l' line (or a select chunk's "
                   f"'{name}=...'); also the workflow tool's PBS template, if a tool writes the script\n"
                   "pbsnodes -av | grep -o 'resources_available\\.[A-Za-z_]*' | sort -u   "
                   "# the resources this cluster's nodes define: keep only these in the request\n"
                   f"# then remove {name} from the request (or rename it to this site's resource for the same thing, as its "
                   "documentation names it) and qsub again"),
              evidence=told_evidence(s))
