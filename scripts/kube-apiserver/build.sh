#!/usr/bin/env bash
# Ensures a real kube-apiserver v1.20.2 and etcd for the gateway tests (tests/gateway/), or,
# given `kube-scheduler`, the scheduler of the same release (the tests that watch a real
# scheduler bind pods).
#
# The binary is built once per machine from Debian's own `kubernetes` source package (which
# vendors its Go dependencies, so no network beyond the Debian mirror is needed) with Debian's
# Go, and cached outside the repository; later calls return at once. About 7 minutes on 2 cores.
# Installs the Debian packages it needs with apt-get (needs root for that; etcd comes from
# `etcd-server`). The last line printed is the binary's path.
#
# Usage: scripts/kube-apiserver/build.sh [kube-apiserver|kube-scheduler]
# Cache: ${SCHEDBOARD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/schedboard}/<component>-v1.20.2/
set -euo pipefail

VERSION=v1.20.2
COMPONENT=${1:-kube-apiserver}
case $COMPONENT in kube-apiserver | kube-scheduler) ;; *) echo "error: unknown component $COMPONENT" >&2; exit 2 ;; esac
CACHE=${SCHEDBOARD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/schedboard}
OUT=$CACHE/$COMPONENT-$VERSION
BIN=$OUT/$COMPONENT
RUNTIME_PACKAGES=(etcd-server openssl curl)
BUILD_PACKAGES=(golang-go golang-github-modern-go-reflect2-dev rsync make)

die() { printf 'error: %s\n' "$*" >&2; exit 1; }
works() { [[ -x $BIN ]] && "$BIN" --version 2>/dev/null | grep -q "Kubernetes $VERSION"; }

apt_install() {  # apt_install PKG...: install the missing ones; refresh the index once if needed
    local missing=() pkg
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
    done
    ((${#missing[@]})) || return 0
    [[ $(id -u) = 0 ]] || die "missing Debian packages: ${missing[*]} (run as root, or apt-get install them)"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null 2>&1; then
        apt-get update -q >/dev/null
        apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
    fi
}

apt_install "${RUNTIME_PACKAGES[@]}"
if works; then echo "$BIN"; exit 0; fi

mkdir -p "$OUT"
# One build at a time per cache: a second caller waits, then finds the binary.
exec 9>"$OUT/.lock"
flock 9
if works; then echo "$BIN"; exit 0; fi

apt_install "${BUILD_PACKAGES[@]}"
W=$(mktemp -d "${TMPDIR:-/tmp}/schedboard-kube-build.XXXXXX")
trap 'rm -rf "$W"' EXIT
LOG=$OUT/build.log
: >"$LOG"
echo "building $COMPONENT $VERSION (about 7 minutes; log: $LOG)" >&2
{
    mkdir -p "$W/lists/partial" "$W/sources" "$W/gopath/src/k8s.io" "$W/home"
    # The machine's own Debian sources as deb-src, in a private apt state (nothing global changes).
    if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
        sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources >"$W/sources/src.sources"
    else
        sed -n 's/^deb /deb-src /p' /etc/apt/sources.list >"$W/sources/src.list"
    fi
    A=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$W/sources"
        -o "Dir::State::Lists=$W/lists")
    apt-get "${A[@]}" update -q
    (cd "$W" && apt-get "${A[@]}" source --download-only kubernetes)
    (cd "$W" && tar xzf kubernetes_*.orig.tar.gz)
} >>"$LOG" 2>&1 || { tail -n 30 "$LOG" >&2; die "fetching the kubernetes source package failed"; }
S=$(ls -d "$W"/kubernetes-1.*/ | head -n 1)
S=${S%/}
[[ $S == */kubernetes-${VERSION#v} ]] || die "expected kubernetes ${VERSION#v} sources, got ${S##*/}"

# The vendored reflect2 1.0.1 crashes under Go >= 1.18: use Debian's 1.0.2 instead.
R=$S/vendor/github.com/modern-go/reflect2
rm -f "$R"/*.go "$R"/*.s
cp /usr/share/gocode/src/github.com/modern-go/reflect2/*.go \
    /usr/share/gocode/src/github.com/modern-go/reflect2/*.s "$R"/
rm -f "$R"/*_test.go

export GOCACHE=$W/gocache HOME=$W/home GOPROXY=off CGO_ENABLED=0 GOFLAGS=
{
    (cd "$S" && make gen_openapi)  # the generated OpenAPI code is not in the tarball
    ln -sfn "$S" "$W/gopath/src/k8s.io/kubernetes"
    cd "$W/gopath/src/k8s.io/kubernetes"
    V=k8s.io/kubernetes/vendor/k8s.io
    GOPATH=$W/gopath GO111MODULE=off go build -o "$BIN.partial" \
        -ldflags "-s -w -X $V/component-base/version.gitVersion=$VERSION" \
        "k8s.io/kubernetes/cmd/$COMPONENT"
} >>"$LOG" 2>&1 || { tail -n 30 "$LOG" >&2; die "building $COMPONENT failed; full log in $LOG"; }
mv "$BIN.partial" "$BIN"  # atomic rename: a half-written binary is never found in the cache
works || die "the built $BIN does not report $VERSION"
"$BIN" --version >&2
echo "$BIN"
