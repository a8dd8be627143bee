"""A cloud provider refusing to start an instance because the zone has no free hardware of that type
now (knowledge/messages/cloud_capacity.toml): EC2's InsufficientInstanceCapacity (and AWS
ParallelCluster's Slurm nodes that carry it in their reason), Compute Engine's
ZONE_RESOURCE_POOL_EXHAUSTED, Azure's AllocationFailed, Oracle Cloud's "Out of host capacity"."""

from __future__ import annotations

import shlex
from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "cloud-instance-capacity-unavailable"


def _arg(value, placeholder: str) -> str:
    return shlex.quote(str(value)) if value else placeholder


# Each provider's own way to see where the type is offered, and to hold capacity that must be there.
def _aws_fix(s: dict) -> str:
    kind = _arg(s.get("type"), "INSTANCE_TYPE")
    return (f"aws ec2 describe-instance-type-offerings --location-type availability-zone --filters "
            f"Name=instance-type,Values={kind} --output table   # the zones of this region that offer the type\n"
            "# launch in another of those zones (another subnet), or with another instance type, or later: capacity "
            "changes by the minute; AWS ParallelCluster: several instance types or subnets in the compute resource\n"
            f"aws ec2 create-capacity-reservation --instance-type {kind} --instance-platform Linux/UNIX "
            "--availability-zone ZONE --instance-count N   # where the instances must be there when the job starts")


def _gcp_fix(s: dict) -> str:
    kind = s.get("type")
    listing = (f"gcloud compute machine-types list --filter=\"name={kind}\"   # the zones that offer {kind}" if kind
               else "gcloud compute accelerator-types list   # the zones that offer each GPU type")
    return (f"{listing}\n"
            "# create the instance in another of those zones, with another machine type, or later: the zone is short "
            "of hardware, and a quota increase does not change that\n"
            "gcloud compute reservations create NAME --zone=ZONE --machine-type=TYPE --vm-count=N   # where the "
            "capacity must be there when the job starts")


def _azure_fix(s: dict) -> str:
    return ("az vm list-skus --location LOCATION --size SIZE --output table   # where the size is offered, and its "
            "zone restrictions\n"
            "# deploy the VM in another zone or region, with another size, or later (for a stopped VM in an "
            "availability set: stop all its VMs, then start them together)\n"
            "az capacity reservation group create --name NAME --resource-group GROUP --location LOCATION   # "
            "then reserve the size in it where the capacity must be there")


def _oci_fix(s: dict) -> str:
    return ("oci iam availability-domain list   # this region's availability domains\n"
            "# launch in another availability domain (and without a fixed fault domain), with another shape, or later; "
            "a capacity reservation holds hosts where they must be there")


_PROVIDERS = {
    "aws": ("EC2", "the Availability Zone", _aws_fix),
    "gcp": ("Compute Engine", "the zone", _gcp_fix),
    "azure": ("Azure", "the region or zone", _azure_fix),
    "oci": ("Oracle Cloud", "the availability domain", _oci_fix),
}


@rule("SYS062", SYMBOL, "error", "the cloud has no capacity for the requested instance type in the zone now", impact=5)
def cloud_instance_capacity_unavailable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a cloud provider's refusal to start an instance for lack of hardware: EC2's
        InsufficientInstanceCapacity, InsufficientHostCapacity, InsufficientReservedInstanceCapacity
        and UnfulfillableCapacity (and "We currently do not have sufficient <type> capacity in the
        Availability Zone you requested"), as Terraform, Ansible or AWS ParallelCluster's Slurm node
        reason "(Code:InsufficientInstanceCapacity)" carry them; Compute Engine's
        ZONE_RESOURCE_POOL_EXHAUSTED and "does not have enough resources available to fulfill the
        request"; Azure's AllocationFailed and ZonalAllocationFailed; Oracle Cloud's "Out of host
        capacity".

    Why it matters:
        The zone has none of that instance type free at that moment. It is not the account's quota
        (a quota increase does not help) and not the request's configuration: the same request
        succeeds in another zone, with another type, or later. Cloud HPC clusters whose nodes are
        started per job (ParallelCluster, Slurm's power saving on a cloud) leave the job pending or
        the node down while it lasts.

    How to fix:
        List the zones that offer the type and launch there, allow more instance types or subnets,
        or retry later; reserve capacity (EC2 Capacity Reservations, Compute Engine reservations,
        Azure capacity reservations) where it must be there when the job starts.

    References:
        - https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/troubleshooting-launch.html (Insufficient instance capacity)
        - https://github.com/aws/aws-parallelcluster-node/blob/develop/src/slurm_plugin/slurm_resources.py (EC2_ICE_ERROR_CODES)
        - https://cloud.google.com/compute/docs/resource-error (resource availability errors)
        - https://github.com/MicrosoftDocs/SupportArticles-docs/blob/main/support/azure/virtual-machines/windows/restart-resize-error-troubleshooting.md (allocation failures)
        - https://docs.oracle.com/en-us/iaas/Content/Compute/Tasks/troubleshooting-out-of-host-capacity.htm
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    provider = str(s.get("id", "")).split(":", 1)[-1].split("-", 1)[0]
    cloud, where, fix = _PROVIDERS.get(provider, _PROVIDERS["aws"])
    kind = f" for {s.get('type')}" if s.get("type") else ""
    at = f" ({s.get('zone')})" if s.get("zone") else ""
    yield Hit(message=f"{cloud} has no capacity{kind} in {where}{at} now (line {s.get('line')}: \"{told_text(s)}\"): "
                      "the hardware is short there at the moment, not the account's quota or the request; another zone, "
                      "another instance type or a later retry may start it",
              fix=fix(s), evidence=told_evidence(s))
