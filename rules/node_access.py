"""Who may run a job or log in on a node: the job's owner unknown to the execution host's name
service (every scheduler's own words, knowledge/messages/accounts.toml), and ssh refused by Slurm's
PAM modules (knowledge/messages/pam_slurm.toml), which belong on compute nodes and lock users out of
a login node."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

UNKNOWN = "user-unknown-on-compute-node"
ADOPT = "pam-slurm-adopt-on-login-node"

# Which program said it, for the message: the entry ids of accounts.toml by emitter.
_EMITTER = {
    "sge": "Grid Engine's execution daemon", "slurm": "Slurm", "slurmd": "slurmd on the compute node",
    "pbs": "the PBS MOM", "PBSE": "PBS", "PEND": "LSF", "coreutils": "id", "htcondor": "HTCondor on the execute machine",
    "ch-run": "Charliecloud's ch-run", "ESLURM": "Slurm", "apptainer": "Apptainer (Singularity)",
    # Open MPI's launcher on the host where mpirun (or a daemon) runs: help-plm-rsh.txt's
    # [unknown-user], help-orte-runtime.txt's and PRTE's [session:dir:nopwname]
    "plm-rsh": "Open MPI's mpirun", "orte:session": "Open MPI's runtime", "prte:session": "PRTE (Open MPI 5's runtime)",
}
# GNU id's answer is about the host it ran on, which may be a login node: consistent with the
# fault, not a scheduler's statement that a job could not run.
_ONLY_CONSISTENT = ("accounts:coreutils-id-no-such-user",)
# getpwuid failing for the uid a program runs as (Python's pwd, whoami, id): the host or container
# that ran it lacks the entry, usual in a container under an arbitrary uid: a hint, never more.
_HINT = ("accounts:python-getpwuid-uid-not-found", "accounts:coreutils-cannot-find-name-for-uid",
         "accounts:python-getpass-no-username", "openssh:no-user-exists-for-uid",
         # Go's os/user words by themselves (go_user.toml); inside Apptainer's own lines those say more
         "go_user:unknown-userid", "go_user:lookup-userid-failed", "go_user:current-requires-cgo")
# The user's own finding that NSS misses users sssd knows (getent -s sss finds them): the cause is
# said (nsswitch.conf), the account unknown to that host follows; a warning, as it is prose.
_NSS_SAID = "prose:nss-lookup-misses-users-sss-finds"


def _emitter(s: dict) -> str:
    key = str(s.get("key") or "")
    return next((v for k, v in _EMITTER.items() if key.startswith(k)), "the scheduler")


_UNKNOWN_FIX = (
    "getent passwd USER   # on the compute node (ssh NODE, or srun -w NODE --pty bash as another user): no line = the node does not know the account\n"
    "getent passwd USER   # on the login node, for comparison: the uid and home the job expects\n"
    "getent passwd UID   # by number, where the message names only the uid (Apptainer's and Go's 'unknown userid N')\n"
    "id USER; systemctl status sssd   # on the node: does NSS answer, is sssd (or ypbind/nslcd) running\n"
    "sudo sss_cache -u USER; sudo systemctl restart sssd   # administrators, on the node: refresh a stale or failed sssd cache\n"
    "# administrators: add the account to every execution host's name service (the same LDAP/NIS/sssd domain as the login nodes, or synced /etc/passwd), then clear the job's error state (qmod -cj JOBID for Grid Engine's Eqw)")


@rule("ENV078", UNKNOWN, "error",
      "the job's user is unknown on the host that runs the job (no passwd entry there)", impact=7,
      also={"warning": "GNU id's \"no such user\", which may be a login node's answer rather than the job's host; "
                       "on a live node, nsswitch.conf's passwd or group line not reaching a directory client set up "
                       "there (sssd, nslcd, winbindd); a user's report that id misses users getent -s sss finds",
            "info": "getpwuid failing for a program's own uid (Python's pwd, whoami, id): also a container under an arbitrary uid"})
def user_unknown_on_compute_node(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a scheduler saying it found no passwd entry for the job's owner on the
        host that was to run it: Grid Engine's "can't get password entry for user "X". Either the
        user does not exist or NIS error!" (or "... error with NIS/LDAP etc.", a job in Eqw),
        its shepherd's "can't get password entry for user "X"" and "can't resolve user UID";
        Slurm's "_get_user_env: getpwuid_r(UID):...", "slurm_getpwuid_r: getpwuid_r(UID): ...",
        "_fill_cred_gids: getpwuid failed for uid=UID" and "Unable to resolve user ID to user
        name"; the PBS MOM's "No Password Entry for User X" (PBS's "Bad UID for job execution",
        PBSE_BADUSER, is a submission refusal with other causes: slurm-submit-from-compute-node-refused); LSF's pending reason "Unable to determine user account for execution"
        (PEND_NO_MAPPING); HTCondor's "<user> not in passwd file"; Charliecloud's ch-run, whose
        0.13/0.14 "error (ch_core.c:406)" is its getpwuid of the invoking user returning NULL and
        0.15+'s "getpwuid(3) failed" the same with errno set; Open MPI's "The user (N) is unknown
        to the system (i.e. there is no corresponding entry in the password file)" (mpirun's ssh
        launcher, help-plm-rsh.txt [unknown-user]) and "Open MPI was unable to obtain the username
        in order to create a path for its required temporary directories" (and PRTE's same
        words, [session:dir:nopwname]), whose help text names an LDAP or NIS failure; Apptainer's and
        Singularity's lookups of the user running them ("Couldn't determine user account
        information: ...", 3.0's "Couldn't determine user home directory: ...", "failed to retrieve
        user information for UID N: ...", "failed to retrieve user information: ...", the warning
        "Could not lookup the current user's information: ...", --fakeroot's "could not retrieve
        user information for NAME: ..."). Python's "getpwuid(): uid not found" (and 3.13's getpass
        "No username set in the environment"), ssh's "No user exists for uid N", Go's bare "user:
        unknown userid N", "user: lookup userid N: ..." and "user: Current requires cgo or $USER
        set in environment", and whoami's or id's "cannot find name for user ID N" are info: the host or container
        that ran them lacks the entry, which a container under an arbitrary uid does harmlessly. GNU id's "id: 'X': no such user" is a warning: it says the host it ran
        on does not know the account, which may not be the job's host. A user's report that id
        (or getent passwd) shows no users while getent -s sss finds them is a warning: NSS there
        does not ask sssd.
        On a live node, a warning where /etc/nsswitch.conf's passwd or group line does not reach a
        directory client that is set up on the host (sssd: /etc/sssd/sssd.conf or a running sssd;
        nslcd for ldap; winbindd for winbind): the service is missing from the line, or comes
        after an action that ends the lookup of an unknown name first ([NOTFOUND=return],
        [!SUCCESS=return]); the directory's users are then unknown to id, logins and jobs there.

    Why it matters:
        A scheduler starts the job as its owner on the execution host, and looks the owner up
        there (getpwnam/getpwuid through NSS: /etc/passwd, sssd, NIS, LDAP). Where the account
        exists on the login node but not on the compute nodes, or the node's sssd or ypbind has
        failed, no job of that user can start there: Grid Engine puts it in Eqw, PBS requeues or
        fails it, LSF keeps it pending, Slurm fails the launch.

    How to fix:
        Compare getent passwd USER on the node and on the login node. Administrators add the
        account to the nodes' name service (the same directory as the login nodes) or restart a
        failed sssd/ypbind there, then clear the job's error state.

    References:
        - https://github.com/gridengine/gridengine/blob/6038997b8c416e8f66c878881140adc3da61918b/source/common/msg_common.h (MSG_SYSTEM_GETPWNAMFAILED_S)
        - https://github.com/daimh/sge/blob/05d828f59b32c238936b362cdb89292d261a2b9f/source/daemons/execd/exec_job.c
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/uid.c
        - https://github.com/openpbs/openpbs/blob/cd7ab5edaf03dcac2f1cb9e2f42d75eb117d468a/src/resmom/start_exec.c (check_pwd)
        - https://github.com/htcondor/htcondor/blob/00f9ac097b1a23eced21000f74342d33e2e2a4d3/src/condor_utils/uids.cpp (init_user_ids)
        - https://github.com/hpc/charliecloud/blob/v0.13/bin/ch_core.c (line 406: getpwuid)
        - https://github.com/open-mpi/ompi/blob/v4.1.8/orte/mca/plm/rsh/help-plm-rsh.txt ([unknown-user])
        - https://github.com/open-mpi/ompi/blob/v4.1.8/orte/runtime/help-orte-runtime.txt ([orte:session:dir:nopwname])
        - https://github.com/apptainer/apptainer/blob/v1.5.3/cmd/internal/cli/apptainer.go (getCurrentUser), cmd/internal/cli/build_linux.go, pkg/syfs/syfs.go, internal/pkg/fakeroot/fakeroot.go
        - https://github.com/golang/go/blob/master/src/os/user/user.go (UnknownUserIdError) and cgo_lookup_unix.go (lookupUnixUid)
        - https://github.com/openssh/openssh-portable/blob/V_10_5_P1/ssh.c (main: "No user exists for uid %lu")
        - https://github.com/hpc/charliecloud/issues/649
        - https://man7.org/linux/man-pages/man1/getent.1.html
        - https://man7.org/linux/man-pages/man5/nsswitch.conf.5.html (service specification, [STATUS=ACTION])
        - https://github.com/SSSD/sssd/issues/7613
        - https://sssd.io/troubleshooting/basics.html
    """
    told = catalogued(f, UNKNOWN)
    nss = next((s for s in told if s.get("id") == _NSS_SAID), None)
    told = [s for s in told if s.get("id") != _NSS_SAID]
    if nss is not None and not told:
        yield Hit(message=f"line {nss.get('line')}: \"{told_text(nss)}\": NSS on that host finds no directory users that "
                          "sssd itself knows (getent -s sss asks sssd alone): its /etc/nsswitch.conf passwd and group "
                          "lines do not reach sss, so those users cannot log in or run jobs there",
                  fix=_NSS_FIX["sss"], evidence=told_evidence(nss), severity="warning")
        return
    if not told and not (f.get("ticket.symptoms") or []):
        yield from _nsswitch_misses_a_client(f)
        return
    if told and all(s.get("id") in _HINT for s in told):
        s = told[0]
        who = f"uid {s.get('uid')}" if s.get("uid") else "the uid running it"
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the host or container that ran it has no passwd entry "
                          f"for {who}: harmless in a container started under an arbitrary uid; on a compute node, the "
                          "account is unknown there and jobs of that user fail wherever they look it up",
                  fix=_UNKNOWN_FIX, evidence=told_evidence(s), severity="info")
        return
    told = [s for s in told if s.get("id") not in _HINT]
    said = next((s for s in told if s.get("id") not in _ONLY_CONSISTENT), None)
    if said is None and not told:
        return
    weak = said is None
    said = said or told[0]
    who = said.get("user") or said.get("uid")
    whom = f"the user {who}" if who else "the job's user"
    if weak:
        yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": the host where id ran has no passwd "
                          f"entry for {whom}; where that is a compute node, jobs of that user cannot start there",
                  fix=_UNKNOWN_FIX, evidence=told_evidence(said), severity="warning")
        return
    yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": {_emitter(said)} found no passwd entry for "
                      f"{whom} on the host that was to run the job: the account is not known there (it exists on "
                      "the login node only), or that node's name service (sssd, NIS, LDAP) failed",
              fix=_UNKNOWN_FIX, evidence=told_evidence(said))


_NSS_FIX = {svc: (
    "grep -E '^[[:space:]]*(passwd|group)[[:space:]]*:' /etc/nsswitch.conf   # the services each lookup asks, in order\n"
    f"getent -s {svc} passwd USER; getent passwd USER   # the first answers, the second not: NSS does not ask {svc}\n"
    + ("sudo authselect select sssd --force   # administrators, RHEL family: rewrites nsswitch.conf with sss (keep with-* options the site uses)\n"
       if svc == "sss" else "")
    + f"sudo sed -i -E '/^[[:space:]]*(passwd|group)[[:space:]]*:/ {{/[[:space:]]{svc}([[:space:]]|$)/! s/$/ {svc}/}}' /etc/nsswitch.conf   "
      f"# administrators, elsewhere: add {svc} to both lines (and drop a [NOTFOUND=return] before it)\n"
    + ("sudo sss_cache -E   # then drop sssd's and nscd's stale negative answers (nscd: sudo nscd -i passwd -i group)"
       if svc == "sss" else "sudo nscd -i passwd -i group 2>/dev/null || true   # then drop nscd's cached negative answers"))
    for svc in ("sss", "ldap", "winbind")}


def _nsswitch_misses_a_client(f: FactView) -> Iterator[Hit]:
    """The live judgement: a directory client set up on this host that nsswitch.conf's passwd or
    group line does not reach (checks/name_service.py). Read with f[...] so a node whose
    nsswitch.conf was not read is skipped with that reason."""
    unreached = f["name_service.unreached"]
    clients = f.get("name_service.clients") or {}
    for svc, dbs in sorted(unreached.items()):
        lines = "; ".join(f"{db}: {' '.join(f.get(f'name_service.{db}.services') or []) or '(no line)'}" for db in dbs)
        yield Hit(message=f"{clients.get(svc, svc)}, but /etc/nsswitch.conf does not reach {svc} for {' and '.join(dbs)} "
                          f"({lines}): that directory's users are unknown to id, logins and jobs on this host",
                  fix=_NSS_FIX.get(svc, _NSS_FIX["sss"]), severity="warning",
                  evidence={"name_service.client": clients.get(svc), "name_service.unreached": dbs,
                            **{f"name_service.{db}.services": f.get(f"name_service.{db}.services") for db in dbs}})


_ADOPT_FIX = (
    "salloc -N 1 -t 30:00   # the user: get an allocation first; then, inside it:\n"
    "srun --jobid=JOBID --overlap --pty bash   # a shell on the job's node without ssh (or: ssh NODE, now that you hold a job there)\n"
    "squeue -u $USER -o '%i %N %T'   # which nodes your running jobs hold: only those admit your ssh\n"
    "grep -n pam_slurm /etc/pam.d/sshd /etc/pam.d/system-auth /etc/pam.d/password-auth 2>/dev/null   # administrators, on a login node: pam_slurm_adopt (or pam_slurm) must not be in its account stack")


@rule("ENV079", ADOPT, "info",
      "ssh refused by Slurm's pam_slurm_adopt or pam_slurm: no job of the user on that node", impact=5)
def pam_slurm_adopt_on_login_node(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, Slurm's PAM account modules refusing an ssh login: pam_slurm_adopt's
        "Access denied by pam_slurm_adopt: you have no active jobs on this node" (action_no_jobs=
        deny), "...: unable to determine source job" (several jobs, action_unknown=deny), "...:
        adoption failure" (action_adopt_failure=deny) and "No Slurm jobs found on node.", and the
        older pam_slurm's "Access denied: user X (uid=N) has no active jobs on this node.". Info:
        the line does not say which kind of node refused; on a compute node this is the site's
        policy working (the user's answer is an allocation), on a login node a misconfiguration.

    Why it matters:
        These modules admit ssh to a compute node only for users with a job running there, and
        put the session into the job's cgroups. They belong on compute nodes: installed on a
        login node, where no user holds a job, they lock every ordinary user out (root and the
        groups allowed before them still get in).

    How to fix:
        Users: get an allocation (salloc, sbatch) and reach its node inside it (srun --jobid=ID
        --overlap --pty bash, or ssh to a node the job holds). Administrators: keep
        pam_slurm_adopt out of login nodes' PAM stacks.

    References:
        - https://slurm.schedmd.com/pam_slurm_adopt.html
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/contribs/pam_slurm_adopt/pam_slurm_adopt.c
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/contribs/pam/pam_slurm.c
        - https://github.com/awslabs/awsome-distributed-ai/pull/778 (not on login nodes)
    """
    said = next(iter(catalogued(f, ADOPT)), None)
    if said is None:
        return
    where = ("on a compute node that is the site's policy (ssh only into a node your job holds); on a login node it "
             "is a misconfiguration that locks every ordinary user out")
    yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": Slurm's PAM module refused the ssh login because "
                      f"the user has no job on that node; {where}",
              fix=_ADOPT_FIX, evidence=told_evidence(said))
