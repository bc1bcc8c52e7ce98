package kubelet

import (
	"strconv"
)

// shellWrapper is the container wrapper, run by `ip netns exec` inside the
// pod's network namespace and a private mount namespace: it keeps its
// mounts private, bind-mounts each volume (creating an empty directory or
// file as the mount point, read-only when asked), sets the hostname (the
// kubelet started it in a new UTS namespace), changes directory and execs
// the container's binary, which keeps the pid. It is /bin/sh with
// util-linux mount and hostname, so any binary embedding the kubelet (the
// harness, a test) can start containers without a hidden role of its own.
// Paths travel as positional parameters, never inside the script, so no
// quoting can go wrong. Every container start pays for the programs it
// runs, so it runs none it can skip: mkdir only for a missing mount point,
// and one mount per read-only volume (util-linux binds and remounts it
// read-only in one call).
const shellWrapper = `set -e
mount --make-rprivate /
n=$1; shift
while [ "$n" -gt 0 ]; do
	src=$1; tgt=$2; ro=$3; shift 3
	if [ -d "$src" ]; then
		[ -d "$tgt" ] || mkdir -p "$tgt"
	elif [ ! -e "$tgt" ]; then
		mkdir -p "$(dirname "$tgt")"; : > "$tgt"
	fi
	if [ "$ro" = 1 ]; then mount --bind -o ro "$src" "$tgt"; else mount --bind "$src" "$tgt"; fi
	n=$((n-1))
done
if [ -n "$1" ]; then hostname "$1" || echo "nvcf-container: could not set hostname $1" >&2; fi
cd "$2"
shift 2
exec "$@"
`

// shellArgs renders l as the argv of `sh -c shellWrapper`.
func shellArgs(l *launch) []string {
	args := []string{"/bin/sh", "-c", shellWrapper, "nvcf-container", strconv.Itoa(len(l.Mounts))}
	for _, m := range l.Mounts {
		ro := "0"
		if m.ReadOnly {
			ro = "1"
		}
		args = append(args, m.Source, m.Target, ro)
	}
	dir := l.Dir
	if dir == "" {
		dir = "/"
	}
	args = append(args, l.Hostname, dir)
	return append(args, l.Argv...)
}
