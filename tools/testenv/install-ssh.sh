#!/usr/bin/env bash
# Installs OpenSSH's server for the @cairn/remote-ssh tests (idempotent; needs root).
# No service is started: tests run their own sshd (tools/testenv/sshd.ts).
set -euo pipefail
if [ -x /usr/sbin/sshd ] && command -v ssh-keygen >/dev/null; then
  echo "openssh-server already installed: $(/usr/sbin/sshd -V 2>&1 | head -n1)"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends openssh-server
mkdir -p /run/sshd
echo "openssh-server installed: $(/usr/sbin/sshd -V 2>&1 | head -n1)"
