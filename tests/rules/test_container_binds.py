"""container-path-not-bound on Apptainer's and Singularity's own words (container_linux.go and the
layer code's format strings, public pastes in tests/fixtures/pastes, SOURCES.md there) and on a
read-only write to a site file system's path from inside a container."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, told_facts



def test_a_bind_whose_source_is_not_on_the_node():
    (f,) = fired("container-path-not-bound", recorded_paste_facts("singularity-2700-bind-source-missing.txt"))
    assert f.severity == "error" and "a bind's source /does/not/exist does not exist on this node" in f.message
    assert "singularity exec --bind /does/not/exist IMAGE.sif" in f.fix and "export SINGULARITY_BIND=/does/not/exist" in f.fix


def test_a_destination_the_image_lacks():
    text = ("FATAL:   container creation failed: mount /scratch->/scratch error: while mounting /scratch: "
            "destination /scratch doesn't exist in container\n")
    (f,) = fired("container-path-not-bound", told_facts(text))
    assert "the container did not start" in f.message and f.severity == "error"
    text = "WARNING: Skipping mount /project/def-user [binds]: /project doesn't exist in container\n"
    (f,) = fired("container-path-not-bound", told_facts(text))
    assert "destination /project does not exist in the image" in f.message


def test_a_site_that_forbids_user_binds():
    (f,) = fired("container-path-not-bound",
                 told_facts("WARNING: Ignoring /scratch bind mount: user bind control disabled by system administrator\n"))
    assert "user bind control = no" in f.message


def test_a_read_only_write_to_a_site_file_system_from_a_container_is_a_warning():
    (f,) = fired("container-path-not-bound", recorded_paste_facts("lumi-ai-guide-46-project-fs-not-bound.txt"))
    assert f.severity == "warning" and "/scratch/project_462000131 is not bound" in f.message
    assert "singularity exec --bind /scratch/project_462000131 IMAGE.sif" in f.fix and "singularity-bindings" in f.fix


def test_silent_on_the_images_own_paths_and_the_runtimes_session_scratch():
    # yum's lock under /var/run in a read-only image: the image's own directory, not a host path
    assert not fired("container-path-not-bound", recorded_paste_facts("singularity-38-yum-read-only-image-healthy.txt"))
    # the runtime's session scratch mount point, warned about while it works
    assert not fired("container-path-not-bound", recorded_paste_facts("singularity-4052-scratch-session-warning-healthy.txt"))
    # a read-only site path without a container in the paste is a file system's own state
    assert not fired("container-path-not-bound", told_facts("OSError: [Errno 30] Read-only file system: '/scratch/u/out'\n"))
