"""container-path-not-bound on Apptainer's and Singularity's own words (container_linux.go and the
layer code's format strings, public pastes in tests/fixtures/pastes, SOURCES.md there) and on a
read-only write to a site file system's path from inside a container."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, told_facts



def test_a_bind_whose_source_is_not_on_the_node():
    (f,) = fired("container-path-not-bound", recorded_paste_facts("singularity-2700-bind-source-missing.txt"))
    assert f.severity == "error" and "a bind's source /does/not/exist does not exist on this node" in f.message
    assert "singularity exec --bind /does/not/exist IMAGE.sif" in f.fix and "export SINGULARITY_BIND=/does/not/exist" in f.fix


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


# container-bind-target-missing (ENV138): a bind's destination the image lacks


def test_singularity_246_aborts_on_a_site_bind_the_image_lacks():
    (f,) = fired("container-bind-target-missing", recorded_paste_facts("singularity-1540-bind-target-data-missing-in-container.txt"))
    assert f.severity == "error" and "/data is the destination of a site bind" in f.message and "did not start" in f.message
    assert "singularity exec -B /data:/mnt/data IMAGE.simg ls /mnt/data" in f.fix
    assert "/share/software/user/open/singularity/2.4.6/etc/singularity/singularity.conf" in f.fix
    assert not fired("container-path-not-bound", recorded_paste_facts("singularity-1540-bind-target-data-missing-in-container.txt"))


def test_apptainer_writable_cannot_create_the_destination():
    (f,) = fired("container-bind-target-missing", recorded_paste_facts("apptainer-1895-writable-bind-destination-missing.txt"))
    assert f.severity == "error" and "/storage" in f.message and "--writable leaves no overlay or underlay" in f.message
    assert "apptainer exec -B /storage:/mnt/storage IMAGE.sif ls /mnt/storage" in f.fix
    assert "$(apptainer buildcfg SYSCONFDIR)/apptainer/apptainer.conf" in f.fix


def test_a_destination_the_image_lacks_in_the_go_runtimes():
    text = ("FATAL:   container creation failed: mount /scratch->/scratch error: while mounting /scratch: "
            "destination /scratch doesn't exist in container\n")
    (f,) = fired("container-bind-target-missing", told_facts(text))
    assert "the container did not start" in f.message and f.severity == "error"
    assert not fired("container-path-not-bound", told_facts(text))
    # the format string, filled in: a site 'bind path' the runtime skipped
    text = "WARNING: Skipping mount /project/def-user [binds]: /project doesn't exist in container\n"
    (f,) = fired("container-bind-target-missing", told_facts(text))
    assert f.severity == "warning" and "the site's bind ('bind path'" in f.message


def test_singularity2_skipped_site_and_user_binds_are_warnings():
    (f,) = fired("container-bind-target-missing", recorded_paste_facts("singularity-1839-site-bind-points-missing.txt"))
    assert f.severity == "warning" and "/N/home is the destination of the site's bind" in f.message
    (f,) = fired("container-bind-target-missing", recorded_paste_facts("dahak-123-user-bind-point-missing.txt"))
    assert f.severity == "warning" and "/data is the destination of your own bind" in f.message


def test_silent_on_the_default_localtime_file_and_on_what_is_not_a_missing_destination():
    # the site's default /etc/localtime file bind the image lacks: the image keeps its own (binds.c's format string)
    assert not fired("container-bind-target-missing",
                     told_facts("WARNING: Non existent bind point (file) in container: '/etc/localtime'\n"))
    # a source missing on the host is container-path-not-bound's, not a destination the image lacks
    assert not fired("container-bind-target-missing", recorded_paste_facts("singularity-2700-bind-source-missing.txt"))
    # the runtime's session scratch mount point, warned about while it works
    assert not fired("container-bind-target-missing", recorded_paste_facts("singularity-4052-scratch-session-warning-healthy.txt"))
