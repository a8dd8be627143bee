#!/usr/bin/env bash
# Run one command in a private mount namespace where one piece of a GPU node's environment is
# missing or wrong, the way a container, a login node or a broken install leaves it, so that the
# emitters (nvidia-smi, torch, NCCL, Triton, CUDA itself) print their own words for it. The node
# is not changed: every mount lives in the namespace and ends with the command.
#
#   unshare -m --propagation private bench/env_fault.sh FAULT [LIB...] -- COMMAND...
#
# FAULT:
#   no-dev-nodes    /dev without the NVIDIA device nodes, nvidia-modprobe failing (a container
#                   started without them)
#   root-only-nodes the NVIDIA device nodes with mode 0600 root:root; COMMAND runs as nobody
#   hide-lib LIB... the shared libraries named (file names or globs: libnvidia-ml.so*) absent
#                   from their folders (ENOENT, as on a node whose driver install lacks them)
#   empty-ldconfig  `ldconfig -p` lists nothing (a container whose loader cache was never built)
#   stub-libcuda    the CUDA toolkit's stub libcuda.so first on LD_LIBRARY_PATH
set -eu
fault=${1:?usage: env_fault.sh FAULT [LIB...] -- COMMAND...}
shift
libs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do libs+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "env_fault.sh: no command" >&2; exit 2; }
keep=$(mktemp -d /tmp/envfault.XXXXXX)

hide_in_dir() {  # hide_in_dir DIR GLOB: DIR's entries but those matching GLOB, as links to a bind of DIR
    local dir=$1 glob=$2 orig="$keep/orig$(echo "$1" | tr / _)" view="$keep/view$(echo "$1" | tr / _)"
    if [ ! -d "$orig" ]; then
        mkdir -p "$orig" "$view"
        mount --bind "$dir" "$orig"
        for e in "$orig"/* "$orig"/.[!.]*; do
            [ -e "$e" ] || [ -L "$e" ] || continue
            ln -s "$e" "$view/$(basename "$e")"
        done
        mount --bind "$view" "$dir"
    fi
    # shellcheck disable=SC2086
    (cd "$view" && rm -f -- $glob)
}

case "$fault" in
no-dev-nodes)
    mkdir -p "$keep/dev"
    mount --rbind /dev "$keep/dev"
    mount -t tmpfs -o mode=0755 tmpfs /dev
    for n in null zero full random urandom tty; do
        [ -e "$keep/dev/$n" ] || continue
        touch "/dev/$n" && mount --bind "$keep/dev/$n" "/dev/$n"
    done
    for d in shm pts mqueue hugepages; do
        [ -d "$keep/dev/$d" ] || continue
        mkdir -p "/dev/$d" && mount --rbind "$keep/dev/$d" "/dev/$d"
    done
    ln -s /proc/self/fd /dev/fd
    # As root, NVML and libcuda run nvidia-modprobe, which makes the missing nodes again: a container
    # has no such helper (or no right to mknod), so here it fails as it would there.
    printf '#!/bin/sh\nexit 1\n' > "$keep/nvidia-modprobe" && chmod 0755 "$keep/nvidia-modprobe"
    for m in /usr/bin/nvidia-modprobe "$(command -v nvidia-modprobe || true)"; do
        [ -e "$m" ] && mount --bind "$keep/nvidia-modprobe" "$m"
    done
    # The driver's libraries make the nodes themselves as root (mknod): without CAP_MKNOD, as a
    # container's device rules leave it, they cannot.
    exec setpriv --bounding-set=-mknod -- "$@"
    ln -s /proc/self/fd/0 /dev/stdin; ln -s /proc/self/fd/1 /dev/stdout; ln -s /proc/self/fd/2 /dev/stderr
    ;;
root-only-nodes)
    mkdir -p "$keep/nodes"
    for n in /dev/nvidia*; do
        [ -c "$n" ] || continue
        maj=$((16#$(stat -c %t "$n"))); min=$((16#$(stat -c %T "$n")))
        mknod -m 0600 "$keep/nodes/$(basename "$n")" c "$maj" "$min"
        mount --bind "$keep/nodes/$(basename "$n")" "$n"
    done
    ls -l /dev/nvidia* >&2
    chmod 0755 "$keep" && mkdir -p "$keep/home" && chmod 0777 "$keep/home"
    export HOME="$keep/home"
    exec setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"
    ;;
hide-lib)
    [ ${#libs[@]} -gt 0 ] || { echo "env_fault.sh: hide-lib needs a library" >&2; exit 2; }
    for lib in "${libs[@]}"; do
        # Every folder the loader or a package could find it in: the loader's cache, the paths
        # given, and where those links lead.
        paths=$( (ldconfig -p | awk -v l="${lib%%\**}" 'index($1, l) == 1 {print $NF}'; \
                  ls -d $lib 2>/dev/null) | sort -u)
        for p in $paths; do
            for q in "$p" "$(readlink -f "$p")"; do
                hide_in_dir "$(dirname "$q")" "$(basename "${lib}")"
            done
        done
    done
    ;;
empty-ldconfig)
    printf '#!/bin/sh\nexit 0\n' > "$keep/ldconfig" && chmod 0755 "$keep/ldconfig"
    for l in /sbin/ldconfig /usr/sbin/ldconfig "$(readlink -f /sbin/ldconfig)"; do
        [ -e "$l" ] && mount --bind "$keep/ldconfig" "$l"
    done
    ;;
stub-libcuda)
    stub=$(ls /usr/local/cuda/lib64/stubs/libcuda.so /usr/local/cuda/targets/*/lib/stubs/libcuda.so \
           2>/dev/null | head -n 1)
    [ -n "$stub" ] || stub=$(find / -xdev -path '*stubs/libcuda.so' 2>/dev/null | head -n 1)
    [ -n "$stub" ] || { echo "env_fault.sh: no stub libcuda.so on this node" >&2; exit 2; }
    mkdir -p "$keep/stub"
    ln -s "$stub" "$keep/stub/libcuda.so.1"
    echo "stub: $stub" >&2
    export LD_LIBRARY_PATH="$keep/stub${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    ;;
*)
    echo "env_fault.sh: unknown fault $fault" >&2; exit 2 ;;
esac
exec "$@"
