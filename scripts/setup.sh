#!/usr/bin/env bash
# `npm run setup`: installs the system programs the service needs when they are missing (root, or sudo without a
# password), otherwise prints the exact command for this OS and stops. Runs before `npm install`: plain bash only.
# On Debian that includes what `npm run images`, `npm run start:containers` and the container driver's tests need
# (Podman, runc, debootstrap).
#
# For tests: SETUP_OS_RELEASE (default /etc/os-release), SETUP_UNAME (default `uname -s`), SETUP_CAN_INSTALL (yes|no,
# default: root or passwordless sudo), SETUP_ASSUME_MISSING (programs to treat as missing, space-separated).
set -euo pipefail

os_release=${SETUP_OS_RELEASE:-/etc/os-release}
kernel=${SETUP_UNAME:-$(uname -s)}
assume_missing=" ${SETUP_ASSUME_MISSING:-} "

say() { printf 'setup: %s\n' "$*"; }

node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 24 ]; then
  say "Node.js 24 or newer is needed (found: $(node --version 2>/dev/null || echo none)): install Node.js 24, the current LTS."
  exit 1
fi

on_path() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/sbin/$1" ]; }
has() {
  case "$assume_missing" in *" $1 "*) return 1 ;; esac
  case "$1" in
    nats-server) on_path nats-server ;;
    postgres) compgen -G "/usr/lib/postgresql/*/bin/pg_ctl" >/dev/null || on_path pg_ctl ;;
    chromium)
      if [ -n "${CHROMIUM_PATH:-}" ]; then [ -x "$CHROMIUM_PATH" ]; else
        [ -x /usr/bin/chromium ] || on_path chromium || on_path chromium-browser
      fi
      ;;
    *) on_path "$1" ;;
  esac
}

family=unknown
if [ "$kernel" = Darwin ]; then
  family=macos
elif [ -r "$os_release" ]; then
  ids=$(. "$os_release" && echo " ${ID:-} ${ID_LIKE:-} ")
  case "$ids" in
    *" debian "* | *" ubuntu "*) family=debian ;;
    *" fedora "* | *" rhel "* | *" centos "*) family=fedora ;;
  esac
fi

# What the service runs, in the order the packages are named below. Browsers are sandboxed with bubblewrap and
# reached through socat (Linux only); Perl relays callers' CDP into a sandbox's network (ss counts its bytes);
# setpriv and runuser (util-linux) drop root for browsers and Postgres; ffmpeg encodes recordings.
programs=(nats-server postgres chromium ffmpeg)
[ "$kernel" = Linux ] && programs+=(bwrap socat setpriv perl ss)
# Debian's headless shell (Debian's alone, not Ubuntu's): the lighter browser CHROMIUM_PATH may name instead
# (docs/browser-pool.md), which the tests run too.
[ "$family" = debian ] && [ "$(. "$os_release" && echo "${ID:-}")" = debian ] && programs+=(chromium-headless-shell)
# Podman builds and runs the images where no registry is reachable (runc where crun cannot run, debootstrap for the
# base images); the container driver's tests run browsers in it.
[ "$family" = debian ] && programs+=(podman runc debootstrap)
missing=()
for program in "${programs[@]}"; do has "$program" || missing+=("$program"); done

can_install=${SETUP_CAN_INSTALL:-}
sudo=()
if [ -z "$can_install" ]; then
  if [ "$(id -u)" -eq 0 ]; then can_install=yes
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then can_install=yes; sudo=(sudo -n)
  else can_install=no
  fi
fi

# Browsers read the system's font cache (read-only in their sandbox). Images often ship without it, and then every
# browser scans the fonts and writes a cache of its own into each new profile (~19 ms of every launch).
font_cache() {
  [ "$kernel" = Linux ] && [ "$can_install" = yes ] && command -v fc-cache >/dev/null 2>&1 || return 0
  "${sudo[@]}" fc-cache -s || say "warning: the system's font cache could not be built (fc-cache -s); browsers build their own."
}

if [ ${#missing[@]} -eq 0 ]; then
  font_cache
  say "everything the service needs is installed (${programs[*]})."
  exit 0
fi

package_of() {
  case "$family:$1" in
    debian:postgres) echo postgresql ;;
    fedora:postgres) echo postgresql-server ;;
    fedora:ffmpeg) echo ffmpeg-free ;;
    fedora:ss) echo iproute ;;
    debian:perl) echo perl-base ;;
    fedora:perl) echo perl-interpreter ;;
    macos:postgres) echo postgresql@16 ;;
    *:bwrap) echo bubblewrap ;;
    *:setpriv) echo util-linux ;;
    *:ss) echo iproute2 ;;
    *) echo "$1" ;;
  esac
}
packages=()
for program in "${missing[@]}"; do
  package=$(package_of "$program")
  [[ " ${packages[*]} " == *" $package "* ]] || packages+=("$package")
done

case $family in
  debian) install=(apt-get install -y --no-install-recommends "${packages[@]}") ;;
  fedora) install=(dnf install -y "${packages[@]}") ;;
  macos) install=(brew install "${packages[@]}") ;;
  *)
    say "missing: ${missing[*]}. This OS is not one setup knows (Debian/Ubuntu, Fedora, macOS): install them with"
    say "its package manager, or point the service at existing ones (NATS_URL, DATABASE_URL, CHROMIUM_PATH)."
    exit 1
    ;;
esac

if [ "$family" = macos ] || [ "$can_install" != yes ]; then
  [ "$family" = debian ] && hint="sudo apt-get update && sudo ${install[*]}" || hint="${install[*]}"
  [ "$family" = fedora ] && hint="sudo ${install[*]}"
  say "missing: ${missing[*]}. Install them, then run this again:"
  printf '\n  %s\n\n' "$hint"
  [ "$family" = macos ] && say "note: browsers run in a bubblewrap sandbox, which needs Linux; on macOS use the Kubernetes driver or a Linux VM."
  exit 1
fi

say "installing ${packages[*]} ..."
if [ "$family" = debian ]; then
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" "${install[@]}" -qq </dev/null
else
  "${sudo[@]}" "${install[@]}" </dev/null
fi
still=()
for program in "${missing[@]}"; do has "$program" || still+=("$program"); done
if [ ${#still[@]} -gt 0 ]; then
  say "still missing after installing: ${still[*]}"
  exit 1
fi
font_cache
say "installed ${packages[*]}."
