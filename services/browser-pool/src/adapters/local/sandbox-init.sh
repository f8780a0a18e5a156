#!/bin/sh
# The first thing that runs inside a browser's sandbox (see sandbox.ts), as the user that started browser-pool.
# The sandbox has a network of its own with nothing in it but loopback, so the two bridges below are the browser's
# only ways in and out: Chromium's proxy port leads to browser-pool's egress proxy on a Unix socket, and DevTools is
# reached only through a socket in a folder the browser's user cannot open. Then Chromium starts as that user.
# Arguments: <uid or ""> <chromium> [chromium flags...]
uid=$1
shift
socat TCP-LISTEN:3128,bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:/sockets/egress.sock &
socat UNIX-LISTEN:/sockets/devtools.sock,fork,unlink-early,mode=600 TCP:127.0.0.1:9222 &
if [ -n "$uid" ]; then
  set -- setpriv --reuid="$uid" --regid="$uid" --clear-groups --inh-caps=-all --bounding-set=-all "$@"
fi
"$@"
# Chromium is gone: so is the browser. Ending the group ends the bridges and, with them, the sandbox.
kill 0
