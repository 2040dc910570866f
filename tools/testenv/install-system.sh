#!/usr/bin/env bash
# Installs the system packages Cairn's tests use: OpenSSH server (remote-ssh), Slurm + munge +
# slurmrestd (remote-slurm), python3 + venv (command steps, the Python helper), Son of Grid Engine (remote-sge), Chromium (CLI HTML screenshots),
# Ceph's monitor, OSD and RADOS Gateway (store-s3: a real S3-compatible object store, started by
# tools/testenv/rgw.ts). Idempotent: installs only what is missing. Needs root (or sudo) and
# Debian's apt (waiting up to 5 minutes for its lock: another install may be running); elsewhere it says what is missing and goes on,
# and the affected test files skip locally (in CI, where CI=true, they fail instead).
set -euo pipefail

need=()
command -v sshd >/dev/null 2>&1 || [ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v slurmctld >/dev/null 2>&1 || [ -x /usr/sbin/slurmctld ] || need+=(slurm-wlm)
command -v munged >/dev/null 2>&1 || [ -x /usr/sbin/munged ] || need+=(munge)
command -v slurmrestd >/dev/null 2>&1 || [ -x /usr/sbin/slurmrestd ] || need+=(slurmrestd slurm-wlm-jwt-plugin)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v radosgw >/dev/null 2>&1 || need+=(radosgw)
command -v ceph-mon >/dev/null 2>&1 || need+=(ceph-mon)
command -v ceph-osd >/dev/null 2>&1 || need+=(ceph-osd)
{ command -v ceph >/dev/null 2>&1 && command -v radosgw-admin >/dev/null 2>&1; } || need+=(ceph-common)
# python3 with venv + ensurepip: command steps' tests run real Python, and scripts/test.sh runs
# the Python helper's pytest suite in a venv (.venv-test).
command -v python3 >/dev/null 2>&1 || need+=(python3)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
# The system's own python3 with venv: remote-ssh's command test makes a venv the SSH host's user
# can run (root's python3 may be elsewhere, e.g. pyenv's under /root).
[ -x /usr/bin/python3 ] || need+=(python3)
/usr/bin/python3 -c 'import venv' >/dev/null 2>&1 || need+=(python3-venv)
# pgrep (procps) and cmp (diffutils): a grid command step's job script stops a program's process
# tree and compares its declared sources with their submitted copies (packages/grid README).
command -v pgrep >/dev/null 2>&1 || need+=(procps)
command -v cmp >/dev/null 2>&1 || need+=(diffutils)
# objdump and nm (binutils), cc (gcc): @cairn/native's tests read the built module's symbols
# (glibc floor) and compile a small C program against it (thread-exit destructors).
{ command -v objdump >/dev/null 2>&1 && command -v nm >/dev/null 2>&1; } || need+=(binutils)
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
sge=0
{ [ -x /usr/sbin/sge_qmaster ] && [ -x /usr/sbin/sge_execd ] && [ -x /usr/lib/gridengine/qsub ]; } || { need+=(gridengine-master gridengine-exec gridengine-client); sge=1; }

if [ ${#need[@]} -eq 0 ]; then
  echo "system packages: all present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "system packages missing (${need[*]}) and not root: install them with apt-get, or the SSH/Slurm/browser/object-store tests will skip" >&2
    exit 0
  fi
fi
echo "installing system packages: ${need[*]}"
if [ "$sge" = 1 ]; then
  # Grid Engine's packages ask whether to set up a cell, its name and its master. The tests
  # (tools/testenv/sge.ts) make a private cell of their own and never use the system one, so:
  # the default cell, and no master (an empty act_qmaster), so no system qmaster starts.
  printf '%s\n' \
    'gridengine-common shared/gridengineconfig boolean true' \
    'gridengine-common shared/gridenginecell string default' \
    'gridengine-common shared/gridenginemaster string' | $SUDO debconf-set-selections
fi
$SUDO apt-get -o DPkg::Lock::Timeout=300 update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${need[@]}" >/dev/null
echo "system packages: installed ${need[*]}"
