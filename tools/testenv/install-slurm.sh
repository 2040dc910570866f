#!/usr/bin/env bash
# Installs a single-node Slurm (22.05 on Debian 12) for the @cairn/remote-slurm tests.
# Idempotent: does nothing when everything is already installed. Starts no daemon
# (tools/testenv/slurm.ts starts and stops its own).
set -euo pipefail
pkgs=(slurm-wlm munge slurmrestd slurm-wlm-jwt-plugin)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" = 0 ]; then
  echo "install-slurm: already installed (slurm-wlm $(dpkg-query -W -f='${Version}' slurm-wlm))"
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y --no-install-recommends "${missing[@]}"
echo "install-slurm: installed ${missing[*]} (slurm-wlm $(dpkg-query -W -f='${Version}' slurm-wlm))"
