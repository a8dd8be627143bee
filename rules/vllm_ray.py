"""vLLM's Ray executor finding no GPU on the node of the process that creates the engine
(knowledge/messages/vllm_ray.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "ray-driver-without-gpu"
# vLLM's own advice while it waits for the placement group (ray_utils._wait_until_pg_ready): the IP
# Ray registered for each node must be the one VLLM_HOST_IP names there; its multi-node example starts
# each node with both set to the same address.
_FIX = ("ray status   # the GPUs each node of the Ray cluster offers: the node the vLLM process runs on must offer one\n"
        "# start vllm serve (or the script that creates LLM(...)) on a Ray node with GPUs: normally the head node, "
        "started with ray start --head on a GPU node\n"
        "export VLLM_HOST_IP=NODE_IP   # on every node, before ray start --node-ip-address=NODE_IP (the same address): "
        "vLLM finds its own node by this IP")


@rule("ENV146", SYMBOL, "error", "vLLM's engine runs on a Ray node that got no GPU", impact=5)
def ray_driver_without_gpu(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, vLLM's Ray executor refusing to start because the node it runs on holds
        no GPU of its placement group: "Ray does not allocate any GPUs on the driver node",
        "driver node id ... is not included in a placement group", "Current node has no GPU
        available ... vLLM engine cannot start without GPU".

    Why it matters:
        The vLLM process (vllm serve, or the script calling LLM(...)) is itself the first worker and
        needs a GPU on its own node. Started on a Ray head node without GPUs, or on a node whose IP
        as vLLM computes it (VLLM_HOST_IP, else the default route's) is not the one Ray registered,
        it gets no GPU there and stops, however many GPUs the other nodes offer.

    How to fix:
        Check ray status; run the vLLM process on a Ray node with GPUs (the head node, started on a
        GPU node), and on every node set VLLM_HOST_IP to the address ray start was given with
        --node-ip-address.

    References:
        - https://github.com/vllm-project/vllm/blob/main/vllm/executor/ray_utils.py (initialize_ray_cluster, _verify_bundles)
        - https://docs.vllm.ai/en/stable/examples/online_serving/multi-node-serving/ (the head node runs vllm serve)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    where = (f" (driver {s.get('driver_ip')}, workers {s.get('worker_ips')})" if s.get("driver_ip") else "")
    yield Hit(message=f"vLLM's engine runs on a Ray node that holds none of its GPUs{where} (line {s.get('line')}: "
                      f"\"{told_text(s)}\"): that node offers no GPU to Ray, or its IP as vLLM sees it is not the one Ray "
                      "registered, so the engine, itself the first worker, cannot start",
              fix=_FIX, evidence=told_evidence(s))
