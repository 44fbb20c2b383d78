#!/usr/bin/env bash
# Starts etcd and kube-apiserver for tests, on free ports of 127.0.0.1 only, with their data,
# certificates, logs and pids in DIR. Both run in their own session (setsid), so they survive
# this script and stop.sh DIR can stop them.
#
# What DIR holds afterwards:
#   kubeconfig   contexts "admin" (group system:masters; current) and "schedboard" (the
#                service account system:serviceaccount:schedboard:schedboard, subject to RBAC),
#                both verifying the server against ca.crt
#   ca.crt, server.crt, server.key   a private CA and the server's certificate (127.0.0.1)
#   sa-token     the schedboard identity's bearer token (for in-cluster style connections)
#   env          KUBECONFIG, APISERVER_URL, APISERVER_PORT, APISERVER_PID, ETCD_PID
#   *.log        the servers' output
# The last line printed is the kubeconfig's path.
#
# Usage: scripts/kube-apiserver/start.sh KUBE_APISERVER_BINARY DIR
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: $0 KUBE_APISERVER_BINARY DIR" >&2; exit 2; }
BIN=$1
D=$2
[[ -x $BIN ]] || { echo "error: $BIN is not an executable (build it: scripts/kube-apiserver/build.sh)" >&2; exit 1; }
command -v etcd >/dev/null || { echo "error: etcd not found (apt-get install etcd-server)" >&2; exit 1; }
mkdir -p "$D/etcd"
D=$(cd "$D" && pwd)

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
token() { python3 -c 'import secrets; print(secrets.token_hex(24))'; }

certificates() {  # a private CA, and a serving certificate for 127.0.0.1 / localhost
    local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
    openssl req -x509 "${ec[@]}" -keyout "$D/ca.key" -out "$D/ca.crt" -days 30 \
        -subj "/CN=schedboard-test-ca" 2>/dev/null
    openssl req "${ec[@]}" -keyout "$D/server.key" -out "$D/server.csr" \
        -subj "/CN=kube-apiserver" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >"$D/server.ext"
    openssl x509 -req -in "$D/server.csr" -CA "$D/ca.crt" -CAkey "$D/ca.key" -CAcreateserial \
        -out "$D/server.crt" -days 30 -extfile "$D/server.ext" 2>/dev/null
    # Service-account token signing key (required flags, even though nothing issues tokens).
    openssl genrsa -out "$D/sa.key" 2048 2>/dev/null
    openssl rsa -in "$D/sa.key" -pubout -out "$D/sa.pub" 2>/dev/null
}

[[ -f $D/server.crt ]] || certificates
ETCD_CLIENT=$(free_port)
ETCD_PEER=$(free_port)
PORT=$(free_port)
ADMIN_TOKEN=$(token)
SA_TOKEN=$(token)
SA_USER=system:serviceaccount:schedboard:schedboard
{
    echo "$ADMIN_TOKEN,admin,admin-uid,system:masters"
    echo "$SA_TOKEN,$SA_USER,schedboard-uid,\"system:serviceaccounts,system:serviceaccounts:schedboard,system:authenticated\""
} >"$D/tokens.csv"
chmod 600 "$D/tokens.csv" "$D/ca.key" "$D/server.key" "$D/sa.key"
printf '%s' "$SA_TOKEN" >"$D/sa-token"
chmod 600 "$D/sa-token"

setsid etcd --name test --data-dir "$D/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_CLIENT" \
    --advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER" \
    --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER" \
    --initial-cluster "test=http://127.0.0.1:$ETCD_PEER" \
    >"$D/etcd.log" 2>&1 </dev/null &
echo $! >"$D/etcd.pid"

setsid "$BIN" \
    --etcd-servers="http://127.0.0.1:$ETCD_CLIENT" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$PORT" \
    --insecure-port=0 --profiling=false \
    --tls-cert-file="$D/server.crt" --tls-private-key-file="$D/server.key" \
    --token-auth-file="$D/tokens.csv" --authorization-mode=RBAC \
    --service-account-issuer=https://kubernetes.default.svc \
    --service-account-key-file="$D/sa.pub" --service-account-signing-key-file="$D/sa.key" \
    --service-cluster-ip-range=10.0.0.0/24 \
    --disable-admission-plugins=ServiceAccount \
    >"$D/apiserver.log" 2>&1 </dev/null &
echo $! >"$D/apiserver.pid"

URL="https://127.0.0.1:$PORT"
for _ in $(seq 1 240); do
    if curl -fsS --cacert "$D/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN" "$URL/readyz" >/dev/null 2>&1; then
        cat >"$D/kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: "$URL", certificate-authority: "$D/ca.crt"}
users:
- name: admin
  user: {token: "$ADMIN_TOKEN"}
- name: schedboard
  user: {token: "$SA_TOKEN"}
contexts:
- name: admin
  context: {cluster: test, user: admin}
- name: schedboard
  context: {cluster: test, user: schedboard}
current-context: admin
KUBECONFIG
        chmod 600 "$D/kubeconfig"
        {
            echo "KUBECONFIG=$D/kubeconfig"
            echo "APISERVER_URL=$URL"
            echo "APISERVER_PORT=$PORT"
            echo "APISERVER_PID=$(cat "$D/apiserver.pid")"
            echo "ETCD_PID=$(cat "$D/etcd.pid")"
        } >"$D/env"
        echo "$D/kubeconfig"
        exit 0
    fi
    if ! kill -0 "$(cat "$D/apiserver.pid")" 2>/dev/null; then break; fi
    sleep 0.25
done
echo "error: kube-apiserver did not become ready; last lines of $D/apiserver.log:" >&2
tail -n 20 "$D/apiserver.log" >&2
"$(dirname "$0")/stop.sh" "$D"
exit 1
