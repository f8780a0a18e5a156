#!/bin/sh
# Entrypoint of the browser pod image (bas/chromium) of browser-pool's Kubernetes driver: one headless Chromium,
# with the pod's arguments (window size, the egress proxy, about:blank) appended, as chromedp/headless-shell does.
#
# DevTools must answer on the pod IP, but Chromium's headless mode binds it to loopback whatever
# --remote-debugging-address says (checked with Chromium 156), so socat forwards DEVTOOLS_PORT (9222, browser-pool's
# K8S_DEVTOOLS_PORT) on every address to Chromium's own port on loopback.
#
# --no-sandbox: Chromium's sandbox needs user namespaces or a setuid helper, which a pod with no capabilities under
# the RuntimeDefault seccomp profile does not get; the pod is the sandbox (uid 1000, no capabilities, read-only
# root, a NetworkPolicy that lets it reach only browser-pool's egress proxy). /tmp is its only writable folder.
set -eu
public_port=${DEVTOOLS_PORT:-9222}
private_port=${CHROMIUM_DEVTOOLS_PORT:-9221}
socat "TCP-LISTEN:${public_port},fork,reuseaddr" "TCP:127.0.0.1:${private_port}" &
exec chromium \
  --headless \
  --no-sandbox \
  --disable-gpu \
  --remote-debugging-address=127.0.0.1 \
  "--remote-debugging-port=${private_port}" \
  "--user-data-dir=${TMPDIR:-/tmp}/chromium" \
  --disable-breakpad \
  --no-default-browser-check \
  --password-store=basic \
  "$@"
