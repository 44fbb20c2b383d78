#!/usr/bin/env bash
# Stops what start.sh DIR started: kube-apiserver first, then etcd, each with SIGTERM, then
# SIGKILL if it has not exited within 10 s. A pid is signalled only while its command line
# still names DIR or the server, so a recycled pid is never hit. Usage: stop.sh DIR
set -uo pipefail
[[ $# -eq 1 ]] || { echo "usage: $0 DIR" >&2; exit 2; }
D=$1

ours() {  # ours PID: is PID still the process start.sh launched?
    local cmdline
    cmdline=$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null) || return 1
    [[ $cmdline == *"$D"* ]]
}

for name in apiserver etcd; do
    [[ -f $D/$name.pid ]] || continue
    pid=$(cat "$D/$name.pid")
    if ours "$pid"; then
        kill "$pid" 2>/dev/null
        for _ in $(seq 1 40); do ours "$pid" || break; sleep 0.25; done
        ours "$pid" && kill -9 "$pid" 2>/dev/null
    fi
    rm -f "$D/$name.pid"
done
exit 0
