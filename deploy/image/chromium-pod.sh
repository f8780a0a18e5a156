#!/bin/sh
# Entrypoint of the browser image (bas/chromium): one headless Chromium, with the caller's arguments (window size, the
# egress proxy, about:blank) appended, as chromedp/headless-shell does. Two ways in and out:
#
# - As a pod of browser-pool's Kubernetes driver: DevTools must answer on the pod IP, but Chromium's headless mode
#   binds it to loopback whatever --remote-debugging-address says (checked with Chromium 156), so socat forwards
#   DEVTOOLS_PORT (9222, browser-pool's K8S_DEVTOOLS_PORT) on every address to Chromium's own port on loopback.
# - As a container of the container driver (SOCKETS_DIR set): the container has no network but its own loopback, and
#   the two Unix sockets in SOCKETS_DIR, bound in from browser-pool's host, are its only ways in and out, as in the
#   local driver's sandbox: DevTools is reached through devtools.sock, and Chromium's proxy port (3128 on loopback)
#   leads to browser-pool's egress proxy on egress.sock.
#
# --no-sandbox: Chromium's sandbox needs user namespaces or a setuid helper, which a container with no capabilities
# under the runtime's default seccomp profile does not get; the container is the sandbox (uid 1000, no capabilities,
# read-only root, and a network that reaches only browser-pool's egress proxy). /tmp is its only writable folder,
# besides the profile (USER_DATA_DIR) the container driver binds in.
set -eu
private_port=${CHROMIUM_DEVTOOLS_PORT:-9221}
if [ -n "${SOCKETS_DIR:-}" ]; then
  socat "UNIX-LISTEN:${SOCKETS_DIR}/devtools.sock,fork,unlink-early,mode=666" "TCP:127.0.0.1:${private_port}" &
  socat TCP-LISTEN:3128,bind=127.0.0.1,reuseaddr,fork "UNIX-CONNECT:${SOCKETS_DIR}/egress.sock" &
else
  socat "TCP-LISTEN:${DEVTOOLS_PORT:-9222},fork,reuseaddr" "TCP:127.0.0.1:${private_port}" &
fi
exec chromium \
  --headless \
  --no-sandbox \
  --disable-gpu \
  --remote-debugging-address=127.0.0.1 \
  "--remote-debugging-port=${private_port}" \
  "--user-data-dir=${USER_DATA_DIR:-${TMPDIR:-/tmp}/chromium}" \
  --disable-breakpad \
  --no-default-browser-check \
  --password-store=basic \
  "$@"
