#!/bin/sh
# Starts a container of the oracle's stand-in kubelet: runs inside the pod's network namespace and
# a mount namespace of its own (both made by `ip netns exec`), carries out the mount plan that
# oracle/kubelet/mounts.ts wrote, and becomes the container's program.
#   launch.sh PLAN ROOT WORKDIR -- PROGRAM [ARGS...]
set -eu
plan=$1 root=$2 workdir=$3
shift 4
while read -r op a b c d; do
  case $op in
    mkdir) mkdir -p "$a" ;;
    touch) [ -e "$a" ] || : >"$a" ;;
    symlink) ln -s "$a" "$b" ;;
    tmpfs) mount -n -t tmpfs -o mode=755 fleetsim-oracle "$a" ;;
    bind) mount -n --bind "$a" "$b" ;;
    rbind) mount -n --rbind "$a" "$b" ;;
    ro) mount -n -o remount,bind,ro "$a" ;;
    overlay) mount -n -t overlay fleetsim-oracle -o "lowerdir=$a,upperdir=$b,workdir=$c" "$d" ;;
    *) echo "launch.sh: unknown operation $op" >&2; exit 127 ;;
  esac
done <"$plan"
if [ "$root" = / ]; then
  cd "$workdir" 2>/dev/null || cd /
  exec "$@"
fi
exec chroot "$root" /bin/sh -c 'cd "$1" 2>/dev/null || cd /; shift; exec "$@"' launch "$workdir" "$@"
