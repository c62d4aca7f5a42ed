#!/usr/bin/env bash
# Build the container (deploy/Containerfile) with podman, start it, check that it refuses to
# start without a status token, that /health answers with the token (401 without), and that
# SIGTERM stops it cleanly (exit status 0). Run from the repository root, as root:
#   bash deploy/build-container.sh
# Needs podman (Debian: apt-get install podman). BASE picks the base image:
#   BASE=docker.io/library/python:3.11-slim   (default; needs a container registry)
#   BASE=debootstrap   builds a Debian bookworm base with debootstrap from Debian's mirror, for
#                      machines that reach package registries but no container registry
# Sandboxes that forbid raising rlimits or run cgroups in hybrid mode need
#   PODMAN_FLAGS="--runtime runc" RUN_FLAGS="--ulimit nofile=1024:1024 --ulimit nproc=1024:1024"
# and a TLS-intercepting proxy's CA for pip inside the build:
#   BUILD_FLAGS="-v /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro
#                --env PIP_CERT=/etc/ssl/certs/ca-certificates.crt"
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${BASE:-docker.io/library/python:3.11-slim}
PODMAN="podman ${PODMAN_FLAGS:-}"
RUN_FLAGS=${RUN_FLAGS:-}
PORT=${PORT:-18750}
TOKEN=$(python3 -c "import secrets; print(secrets.token_hex(16))")

if [ "$BASE" = debootstrap ]; then
  if ! $PODMAN image exists localhost/mjbot-base:bookworm; then
    root=$(mktemp -d)
    debootstrap --variant=minbase --include=python3,python3-venv bookworm "$root" \
      http://deb.debian.org/debian >/dev/null
    tar -C "$root" -c . | $PODMAN import - localhost/mjbot-base:bookworm >/dev/null
    rm -rf "$root"
  fi
  BASE=localhost/mjbot-base:bookworm
fi

echo "== build (base $BASE)"
# shellcheck disable=SC2086
$PODMAN build $RUN_FLAGS ${BUILD_FLAGS:-} --build-arg "BASE=$BASE" -f deploy/Containerfile \
  -t localhost/mjbot:latest . >/tmp/mjbot-container-build.log
echo "== without a token it refuses to start"
# shellcheck disable=SC2086
refusal=$($PODMAN run --rm $RUN_FLAGS localhost/mjbot:latest 2>&1 || true)
if grep -q "set a token" <<<"$refusal"; then
  echo "refused, as it should"
else
  echo "FAIL: started without a token" && exit 1
fi
echo "== start"
# shellcheck disable=SC2086
cid=$($PODMAN run -d $RUN_FLAGS -e "MJBOT_STATUS_TOKEN=$TOKEN" -p "127.0.0.1:$PORT:8750" \
  localhost/mjbot:latest)
trap '$PODMAN rm -f "$cid" >/dev/null 2>&1 || true' EXIT
for _ in $(seq 1 60); do
  curl -sf -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/health" >/dev/null && break
  sleep 0.5
done
echo "/health without the token: $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/health")"
echo "/health with the token: $(curl -s -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/health" | head -c 160)..."
curl -sf -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/metrics" | grep -c '^mjbot_' \
  | sed 's/^/metric samples: /'
echo "== SIGTERM"
start=$(date +%s.%N)
$PODMAN stop -t 30 "$cid" >/dev/null
code=$($PODMAN inspect "$cid" --format '{{.State.ExitCode}}')
echo "stopped in $(python3 -c "print(round($(date +%s.%N) - $start, 2))") s, exit status $code"
$PODMAN logs "$cid" 2>&1 | tail -1
[ "$code" = 0 ]
