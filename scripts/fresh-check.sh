#!/usr/bin/env bash
# `make fresh-check`: proves the README's two commands on a new Debian 12 machine.
#
# Bootstraps a minimal Debian 12 (bookworm) root with mmdebstrap from Debian's own mirrors, with
# nothing but apt, git, make and CA certificates (what a new user needs to clone and type `make`);
# clones the committed revision into it (HEAD, or the one given); enters it with chroot, /proc, /sys,
# /dev and /dev/pts bind-mounted; installs the ember command's packages alone and builds it alone,
# as `make train` does (the build's time and ninja's step count are printed); runs `make train` with
# a short setting, then `make test` (the test packages, then everything else built and run); builds
# the Debian package (`make deb`), installs it with apt (which installs its declared dependencies)
# and runs the installed `ember --version` and a short `ember train` outside the clone; prints each
# step's time and result; removes the root. Exit status 0 only when every step passed.
#
# Usage (as root): scripts/fresh-check.sh [REVISION]      e.g. `make fresh-check REV=9e34cc8`
# FRESH_CHECK_KEEP=1 keeps the root for inspection; FRESH_CHECK_TRAIN_ARGS overrides the short run.
set -euo pipefail
top=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
rev=${1:-HEAD}
train_args=${FRESH_CHECK_TRAIN_ARGS:---max-transitions 40000 --seed 1}
# The installed package's run: two short epochs and a one-episode final evaluation.
deb_train_args="--max-transitions 4000 --steps-per-env 500 --minibatch 1000 --passes 2 --eval-every 1"
deb_train_args+=" --eval-episodes-per-env 1"
deb_train_args+=" --final-eval-episodes-per-env 1 --progress plain --seed 1"

if [ "$(id -u)" -ne 0 ]; then
  echo "fresh-check: needs root (mmdebstrap and chroot)" >&2
  exit 2
fi
if ! command -v mmdebstrap >/dev/null; then
  echo "fresh-check: installing mmdebstrap"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null
fi
sha=$(git -C "$top" rev-parse --verify "$rev^{commit}")

work=$(mktemp -d "${TMPDIR:-/var/tmp}/ember-fresh.XXXXXX")
root=$work/root  # mmdebstrap wants a new or empty directory; the step logs stay beside it
mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2>/dev/null || true; done
  if [ "${FRESH_CHECK_KEEP:-0}" = 1 ]; then
    echo "fresh-check: root and logs kept in $work"
  else
    rm -rf --one-file-system "$work"
  fi
}
trap cleanup EXIT

results=()
failed=0
# step NAME COMMAND...: runs the command, prints its time and result, records it. Each step's log
# is written beside the root; its tail is shown on failure.
step() {
  local name=$1
  shift
  local log="$work/$name.log" t0 t1 rc
  echo "== fresh-check: $name"
  t0=$(date +%s)
  set +e
  "$@" >"$log" 2>&1
  rc=$?
  set -e
  t1=$(date +%s)
  local line
  line=$(printf '%-10s %-4s %5ds' "$name" "$([ $rc -eq 0 ] && echo ok || echo FAIL)" $((t1 - t0)))
  echo "   $line"
  results+=("$line")
  if [ $rc -ne 0 ]; then
    failed=1
    echo "-- last lines of $name (exit $rc):"
    tail -n 30 "$log" | sed 's/^/   | /'
  fi
  return $rc
}

# The host's network setup is the one thing carried into the root: its proxy variables and, where
# the host trusts a CA bundle Debian's does not have (a TLS-inspecting proxy), that bundle, named to
# pip and the other TLS clients. Nothing else of the host's is visible inside.
net_env=()
for v in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY PIP_INDEX_URL \
  PIP_EXTRA_INDEX_URL PIP_TRUSTED_HOST PIP_DEFAULT_TIMEOUT; do
  if [ -n "${!v:-}" ]; then net_env+=("$v=${!v}"); fi
done
host_ca=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
carry_host_ca() {
  [ -s "$host_ca" ] || return 0
  cp "$host_ca" "$root/etc/ssl/host-ca-bundle.crt"
  local c=/etc/ssl/host-ca-bundle.crt
  net_env+=("SSL_CERT_FILE=$c" "PIP_CERT=$c" "REQUESTS_CA_BUNDLE=$c" "CURL_CA_BUNDLE=$c"
    "GIT_SSL_CAINFO=$c")
}

in_root() {
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${net_env[@]}" \
    bash -c "cd /root/ember && $1"
}

# The build `make train` starts with: the ember command alone, its packages already installed
# (the step before), so that the step's time is the build's.
train_build() {
  in_root "make ember"
}

# The number of ninja's steps in a build log: the total of its last "[done/total]" line.
ninja_steps() {
  { grep -o '^\[[0-9]*/[0-9]*\]' "$1" || true; } | tail -n 1 | sed 's|.*/||; s|\]||'
}

# The package `make deb` built, installed by apt from the clone's build tree.
install_deb() {
  in_root "make deb && apt-get install -y -q ./build/release/package/ember_*_amd64.deb"
}

# The installed ember, found on PATH (/usr/bin) and run in an empty directory outside the clone:
# the package's version and dependencies, `ember --version`, then a short training run there.
run_installed() {
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    bash -c "set -e; dpkg -s ember | grep -E '^(Version|Depends):'
      dir=\$(mktemp -d); cd \$dir; test \"\$(command -v ember)\" = /usr/bin/ember
      ember --version; ember train $deb_train_args --out run; test -s run/summary.json"
}

bootstrap() {
  mmdebstrap --variant=apt --include=ca-certificates,git,make bookworm "$root"
}

enter() {
  local d
  for d in proc sys dev dev/pts; do
    mount --bind "/$d" "$root/$d"
    mounted+=("$root/$d")
  done
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  # A machine has /etc/hosts (its installer writes it; no package does): localhost resolves.
  cp /etc/hosts "$root/etc/hosts"
  carry_host_ca
  git clone -q --no-local "$top" "$root/root/ember"
  git -C "$root/root/ember" checkout -q --detach "$sha"
}

summary() {
  echo "== fresh-check summary: revision ${sha:0:12} in a fresh Debian 12 root"
  printf '   %s\n' "${results[@]}"
  if [ $failed -eq 0 ]; then echo "fresh-check: PASS"; else echo "fresh-check: FAIL"; fi
}

echo "fresh-check: revision ${sha:0:12}, root $root"
if step bootstrap bootstrap && step clone enter; then
  if step train-deps in_root "bash scripts/install-deps.sh run" && step train-build train_build; then
    steps=$(ninja_steps "$work/train-build.log")
    echo "   train-build: ${steps:-?} ninja steps"
    results+=("$(printf '%-10s %s ninja steps (the ember command alone)' train-build "${steps:-?}")")
  fi
  step make-train in_root "make train ARGS='$train_args'" || true
  step make-test in_root "make test" || true
  if step deb-install install_deb; then
    step deb-run run_installed || true
  fi
fi
summary
exit $failed
