"""gpu-operator-crd-outdated (rules/k8s_crds.py) on a real Helm paste (tests/fixtures/pastes/SOURCES.md)
and on kubectl's and the API server's own lines: the GPU Operator's kinds fire, every other API's
unknown field is read and left alone."""

from __future__ import annotations

from rulekit import facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


def _paste(text: str):
    return facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)})


def test_an_unknown_clusterpolicy_field_from_helm_is_an_outdated_crd_with_nvidias_upgrade_steps():
    (f,) = fired("gpu-operator-crd-outdated", recorded_paste_facts("gpu-operator-342-clusterpolicy-unknown-field.txt"))
    assert f.severity == "error" and '"kernelModuleConfig"' in f.message and "com.nvidia.v1.ClusterPolicy.spec.driver" in f.message
    assert "clusterpolicies.nvidia.com" in f.message and "never upgrades" in f.message
    assert ("kubectl apply -f https://raw.githubusercontent.com/NVIDIA/gpu-operator/refs/tags/$RELEASE_TAG/"
            "deployments/gpu-operator/crds/nvidia.com_clusterpolicies.yaml") in f.fix
    assert "helm upgrade gpu-operator nvidia/gpu-operator -n gpu-operator -f values-$RELEASE_TAG.yaml --version $RELEASE_TAG" in f.fix
    assert "--disable-openapi-validation" in f.fix   # the chart's upgrade-CRD hook, NVIDIA's Option 2
    # the CRD files are applied before the chart is upgraded
    assert f.fix.index("nvidia.com_clusterpolicies.yaml") < f.fix.index("helm upgrade gpu-operator")


def test_a_strict_decoding_error_of_an_nvidiadriver_fires():
    # No public paste found for this wording: the API server's own format (apiserver rest.go
    # transformDecodeError + apimachinery strictDecodingError + apiextensions' unknown field "%s"),
    # filled in with the GPU Operator's NVIDIADriver kind and a made-up field.
    line = ('Error from server (BadRequest): error when creating "nvd.yaml": NVIDIADriver in version "v1alpha1" cannot be '
            'handled as a NVIDIADriver: strict decoding error: unknown field "spec.someNewField"\n')
    (f,) = fired("gpu-operator-crd-outdated", _paste(line))
    assert "nvidiadrivers.nvidia.com" in f.message and '"spec.someNewField"' in f.message


def test_a_strict_decoding_clusterpolicy_counts_only_under_a_gpu_operator_spec_section():
    # the same filled-in format: a field under spec.driver is the GPU Operator's ClusterPolicy ...
    ours = ('Error from server (BadRequest): error when creating "cp.yaml": ClusterPolicy in version "v1" cannot be handled '
            'as a ClusterPolicy: strict decoding error: unknown field "spec.driver.kernelModuleType"\n')
    assert fired("gpu-operator-crd-outdated", _paste(ours))
    # ... and one under spec.rules is Kyverno's ClusterPolicy (kyverno.io/v1), not the GPU Operator's
    kyverno = ('Error from server (BadRequest): error when creating "p.yaml": ClusterPolicy in version "v1" cannot be handled '
               'as a ClusterPolicy: strict decoding error: unknown field "spec.rules[0].foo"\n')
    assert not fired("gpu-operator-crd-outdated", _paste(kyverno))


def test_another_apis_unknown_field_is_read_but_not_fired():
    # https://github.com/rook/rook/issues/11566 (the description's log line)
    rook = ('Error from server (BadRequest): error when creating "cluster.yaml": CephCluster in version "v1" cannot be handled as '
            'a CephCluster: strict decoding error: unknown field "spec.storage.config.nodes[0].devices", unknown field '
            '"spec.storage.config.nodes[0].name"\n')
    assert [s["id"] for s in find_messages(rook) if s["family"] == "k8s_validation"] == ["k8s_validation:strict-unknown-field"]
    assert not fired("gpu-operator-crd-outdated", _paste(rook))
    # https://github.com/gdcc/dataverse-kubernetes/issues/191 (a core API's typo: client-side validation)
    typo = ('error: error validating "myfirstpod1.yaml": error validating data: [ValidationError(Pod.spec.containers[0].ports[0]): '
            'unknown field "conatainerPort" in io.k8s.api.core.v1.ContainerPort, ValidationError(Pod.spec.containers[0].ports[0]): '
            'missing required field "containerPort" in io.k8s.api.core.v1.ContainerPort]; if you choose to ignore these errors, '
            'turn validation off with --validate=false\n')
    ids = {s["id"] for s in find_messages(typo)}
    assert {"k8s_validation:openapi-unknown-field", "k8s_validation:openapi-missing-required-field",
            "kubectl_resource:error-validating-data"} <= ids
    assert not fired("gpu-operator-crd-outdated", _paste(typo))


def test_a_missing_crd_is_not_an_outdated_one():
    # https://github.com/sighupio/distribution/issues/515: no CRD at all (no matches for kind), another rule's matter
    line = ('resource mapping not found for name: "disallow-capabilities" namespace: "kyverno" from "STDIN": no matches for kind '
            '"ClusterPolicy" in version "kyverno.io/v1"\nensure CRDs are installed first\n')
    ids = {s["id"] for s in find_messages(line)}
    assert {"kubectl_resource:resource-mapping-not-found", "k8s_validation:no-kind-match"} <= ids
    assert not fired("gpu-operator-crd-outdated", _paste(line))
