#!/bin/sh
# The first thing that runs inside a code-mode script's sandbox (see script-runner.ts): the sandbox has a network of
# its own with nothing in it but loopback, and this bridge is its one way out, to the task's own browser (sandboxed
# and behind the egress policy in browser-pool). Then the script runs as an unprivileged user.
# Arguments: <uid or ""> <command...>
uid=$1
shift
socat TCP-LISTEN:9222,bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:/sockets/browser.sock </dev/null >/dev/null 2>&1 &
bridge=$!
if [ -n "$uid" ]; then
  set -- setpriv --reuid="$uid" --regid="$uid" --clear-groups --inh-caps=-all --bounding-set=-all "$@"
fi
"$@"
status=$?
kill "$bridge"
exit "$status"
