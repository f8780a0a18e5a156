#!/bin/sh
# The first thing that runs inside a code-mode script's sandbox (see script-runner.ts): the sandbox has a network of
# its own with nothing in it but loopback, and this bridge is its one way out, to the task's own browser (sandboxed
# and behind the egress policy in browser-pool). Then the script runs as an unprivileged user.
# Arguments: <uid or ""> <command...>
uid=$1
shift
socat TCP-LISTEN:9222,bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:/sockets/browser.sock </dev/null >/dev/null 2>&1 &
bridge=$!
# The script may connect at once: start it only once the bridge listens (127.0.0.1:9222 is 0100007F:2406, state 0A
# LISTEN, in /proc/net/tcp), for at most 5 s.
tries=0
while ! grep -q ':2406 00000000:0000 0A' /proc/net/tcp 2>/dev/null && [ "$tries" -lt 500 ]; do
  tries=$((tries + 1))
  sleep 0.01
done
if [ -n "$uid" ]; then
  set -- setpriv --reuid="$uid" --regid="$uid" --clear-groups --inh-caps=-all --bounding-set=-all "$@"
fi
"$@"
status=$?
kill "$bridge"
exit "$status"
