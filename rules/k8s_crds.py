"""The NVIDIA GPU Operator's custom resource definition older than the chart that uses it, read from
kubectl's and Helm's validation errors (knowledge/messages/k8s_validation.toml): an "unknown field" in
a ClusterPolicy or NVIDIADriver of group nvidia.com (ENV137). Helm installs a chart's crds/ once and
never upgrades them, so a cluster that kept an older CRD refuses the newer chart's fields."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import ticket_read, told_evidence, told_text

SYMBOL = "gpu-operator-crd-outdated"

_OPENAPI = "k8s_validation:openapi-unknown-field"
_STRICT = "k8s_validation:strict-unknown-field"
# kube-openapi names a CRD's definition by its group reversed, its version and its kind:
# group nvidia.com, version v1 -> com.nvidia.v1.ClusterPolicy (resource.nvidia.com, the DRA driver's
# group, is com.nvidia.resource.v1beta1...: another API, not the GPU Operator's).
_NVIDIA_SCHEMA = re.compile(r"^com\.nvidia\.(?P<version>v[0-9]{1,2}(?:(?:alpha|beta)[0-9]{1,2})?)\.(?P<kind>[A-Z][A-Za-z0-9]{0,60})")
# The GPU Operator's kinds in nvidia.com (deployments/gpu-operator/crds/ of NVIDIA/gpu-operator).
# A strict decoding error names the kind without its group: NVIDIADriver is the operator's alone;
# ClusterPolicy is also Kyverno's (kyverno.io), so there it counts only with a field under one of
# the GPU Operator's ClusterPolicy spec sections (NVIDIA's ClusterPolicy reference, spec's keys).
_KINDS = frozenset({"ClusterPolicy", "NVIDIADriver"})
_CLUSTERPOLICY_SECTIONS = frozenset({
    "operator", "daemonsets", "driver", "toolkit", "devicePlugin", "dcgmExporter", "dcgm", "nodeStatusExporter",
    "gfd", "mig", "migManager", "validator", "gds", "gdrcopy", "sandboxWorkloads", "vfioManager", "sandboxDevicePlugin",
    "vgpuManager", "vgpuDeviceManager", "cdi", "kataManager", "ccManager", "hostPaths", "psp", "psa"})

_URL = "https://raw.githubusercontent.com/NVIDIA/gpu-operator/refs/tags/$RELEASE_TAG/deployments/gpu-operator"
_FIX = (
    "helm repo update nvidia && helm search repo nvidia/gpu-operator --versions | head -5   # the chart versions; "
    "pick the one you install\n"
    "export RELEASE_TAG=VERSION   # that chart version, e.g. v25.10.1: the CRDs must come from the same release as the chart\n"
    "kubectl get crd clusterpolicies.nvidia.com nvidiadrivers.nvidia.com   # the CRDs the cluster kept from an earlier install "
    "(Helm never upgrades a chart's crds/)\n"
    f"kubectl apply -f {_URL}/crds/nvidia.com_clusterpolicies.yaml\n"
    f"kubectl apply -f {_URL}/crds/nvidia.com_nvidiadrivers.yaml   # NVIDIADriver: releases v23.9.0 and later\n"
    f"kubectl apply -f {_URL}/charts/node-feature-discovery/crds/nfd-api-crds.yaml\n"
    "helm show values nvidia/gpu-operator --version=$RELEASE_TAG > values-$RELEASE_TAG.yaml   # then edit it as needed\n"
    "helm upgrade gpu-operator nvidia/gpu-operator -n gpu-operator -f values-$RELEASE_TAG.yaml --version $RELEASE_TAG"
    "   # (helm install ... for a first install that failed)\n"
    "# or (chart v22.09 and later) let the chart's pre-upgrade hook apply the CRDs (operator.upgradeCRD, on by default from "
    "v24.9.0): helm upgrade gpu-operator nvidia/gpu-operator -n gpu-operator --disable-openapi-validation "
    "-f values-$RELEASE_TAG.yaml --version $RELEASE_TAG\n"
    "# a release before v23.9.0 names its file crds/nvidia.com_clusterpolicies_crd.yaml: the release's "
    "deployments/gpu-operator/crds/ lists it"
)


def _gpu_operator(s: dict) -> Optional[str]:
    """The GPU Operator kind an unknown-field error is about, or None when it is another API's."""
    if s.get("id") == _OPENAPI:
        m = _NVIDIA_SCHEMA.match(str(s.get("schema") or ""))
        return m.group("kind") if m and m.group("kind") in _KINDS else None
    kind = str(s.get("kind") or "")
    if kind == "NVIDIADriver":
        return kind
    parts = str(s.get("field") or "").split(".")
    if kind == "ClusterPolicy" and len(parts) >= 2 and parts[0] == "spec" and re.sub(r"\[.*", "", parts[1]) in _CLUSTERPOLICY_SECTIONS:
        return kind
    return None


@rule("ENV137", SYMBOL, "error",
      "the GPU Operator's CRD in the cluster is older than its Helm chart: Helm never upgrades CRDs", impact=6)
def gpu_operator_crd_outdated(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        kubectl's (or Helm's) refusal of a field in a resource of the NVIDIA GPU Operator's API group
        nvidia.com: the client-side OpenAPI validation error "ValidationError(ClusterPolicy.spec.driver):
        unknown field \"kernelModuleConfig\" in com.nvidia.v1.ClusterPolicy.spec.driver" (Helm prints
        it after "unable to build kubernetes objects from release manifest"), or the API server's
        strict field validation, 'NVIDIADriver in version "v1alpha1" cannot be handled as a
        NVIDIADriver: strict decoding error: unknown field "spec.x"' (a ClusterPolicy there counts
        only with a field under one of the GPU Operator's spec sections: Kyverno has a ClusterPolicy
        too). The same errors for any other API group are read and left to no rule.

    Why it matters:
        Helm installs the CRDs in a chart's crds/ directory at the first helm install and never
        upgrades (or deletes) them: a CRD left by an earlier GPU Operator release, or by an
        uninstalled one, keeps the older schema, and the newer chart's ClusterPolicy sets fields it
        does not know, so the install or upgrade fails before any operator pod starts.

    How to fix:
        NVIDIA's upgrade procedure: apply the CRDs of the release you install (clusterpolicies,
        nvidiadrivers and Node Feature Discovery's, from that release tag), then helm upgrade (or
        install) with the same --version; or, from chart v22.09, let the chart's pre-upgrade hook
        apply them (operator.upgradeCRD, the default from v24.9.0) with helm upgrade
        --disable-openapi-validation.

    References:
        - https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/upgrade.html (Option 1: Manually Upgrading CRDs; Option 2: Helm hook; read 2026-11-28)
        - https://helm.sh/docs/chart_best_practices/custom_resource_definitions/ (Some caveats: no support for upgrading or deleting CRDs)
        - https://github.com/kubernetes/kube-openapi/blob/master/pkg/util/proto/validation/errors.go (UnknownFieldError)
        - https://github.com/kubernetes/apimachinery/blob/master/pkg/runtime/error.go (strictDecodingError)
        - https://github.com/NVIDIA/gpu-operator/issues/342 (unknown field "kernelModuleConfig" in com.nvidia.v1.ClusterPolicy.spec.driver)
    """
    told = [(s, k) for s in ticket_read(f) if s.get("id") in (_OPENAPI, _STRICT) for k in [_gpu_operator(s)] if k]
    if not told:
        return
    s, kind = told[0]
    field = str(s.get("field") or "").strip()
    where = str(s.get("schema") or "") if s.get("id") == _OPENAPI else f"{kind} (nvidia.com)"
    crd = "clusterpolicies.nvidia.com" if kind == "ClusterPolicy" else "nvidiadrivers.nvidia.com"
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the {crd} CRD in the cluster does not know the field "
                      f"\"{field}\" of {where}, which the GPU Operator chart sets: the CRD is older than the chart (Helm "
                      "installs a chart's CRDs once and never upgrades them)",
              fix=_FIX, evidence=dict(told_evidence(s), kind=kind, field=field))
