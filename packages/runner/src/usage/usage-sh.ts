/**
 * Usage measurement for a program a POSIX shell wrapper runs where no Node is (a command step on
 * an SSH host, or a Slurm/SGE node): shell functions a wrapper includes. No process of the
 * step's own is changed: the wrapper starts the program in the background, a sampler loop beside
 * it, and waits.
 *
 * - CPU: the shell's `times` (its waited children, user + system) before and after the program:
 *   exact for the program and every descendant it waited for.
 * - Memory: every {@link SH_SAMPLE_SECONDS} s, `ps` lists all processes and `awk` sums the
 *   resident sets of the program's tree (the program and its descendants); the largest sum is the
 *   peak (a lower bound: a peak between two samples is missed).
 * - GPU, where `nvidia-smi` is on PATH: the tree's GPU memory (largest sum per sample) and the
 *   mean utilisation of the GPUs it was on.
 *
 * Functions (all names start with `cairn_u`):
 * - `cairn_ustart STATE`: before the program: records `times` (in the current shell: a `$(…)`
 *   subshell's `times` would be its own) and the start time.
 * - `cairn_uloop PID STATE`: the sampler loop (run it in the background with `9>&-` where fd 9 is a
 *   lock): samples PID's tree until PID is gone, keeping `peak_kb gpu_mib util_sum util_n` in STATE.
 * - `cairn_uwrite FILE STATE EXECUTOR RC`: after the program: writes the attempt's `usage.json` to FILE.
 */

/** Seconds between two samples of a shell-measured program. */
export const SH_SAMPLE_SECONDS = 1;

/**
 * Shell functions that turn `times` fields and /proc/uptime into milliseconds with builtins (no
 * fork). A plain string: its `${…}` are the shell's.
 */
const NUMBERS = [
  '# Builtins only where a fork is not needed: on a loaded host each fork+exec costs milliseconds',
  '# (command.bench.mjs, "ssh" row: ~14 processes a step were these functions).',
  '# cairn_unum VALUE: sets cairn_un to VALUE\'s digits without leading zeros (0 when VALUE is not a',
  '# number: arithmetic on it would end the shell; a leading 0 would read as octal).',
  'cairn_unum() { cairn_un=$1; case "$cairn_un" in \'\'|*[!0-9]*) cairn_un=0; return;; esac; while :; do case "$cairn_un" in 0?*) cairn_un=${cairn_un#0};; *) return;; esac; done; }',
  '# cairn_ufrac DIGITS: sets cairn_un to the first three digits after a decimal point as milliseconds.',
  'cairn_ufrac() { cairn_uf="${1}000"; cairn_uf=${cairn_uf%"${cairn_uf#???}"}; cairn_unum "$cairn_uf"; }',
  '# cairn_usec FIELD: sets cairn_un to the milliseconds of a `times` field (`1m2.345s`).',
  'cairn_usec() {',
  '  cairn_um=${1%%m*}; cairn_uss=${1#*m}; cairn_uss=${cairn_uss%s}',
  '  case "$cairn_uss" in *.*) cairn_ufrac "${cairn_uss#*.}";; *) cairn_un=0;; esac; cairn_uv=$cairn_un',
  '  cairn_unum "${cairn_uss%%.*}"; cairn_uv=$((cairn_uv + cairn_un * 1000))',
  '  cairn_unum "$cairn_um"; cairn_un=$((cairn_uv + cairn_un * 60000))',
  '}',
  '# cairn_ums: sets cairn_un to a clock in milliseconds (/proc/uptime: only differences are used), else date\'s.',
  'cairn_ums() {',
  '  if [ -r /proc/uptime ] && read -r cairn_uup cairn_uidle < /proc/uptime; then',
  '    case "$cairn_uup" in *.*) cairn_ufrac "${cairn_uup#*.}";; *) cairn_un=0;; esac; cairn_uv=$cairn_un',
  '    cairn_unum "${cairn_uup%%.*}"; cairn_un=$((cairn_uv + cairn_un * 1000))',
  '  else',
  '    cairn_ud=$(date +%s%3N 2>/dev/null); case "$cairn_ud" in *[!0-9]*|\'\') cairn_ud=$(( $(date +%s) * 1000 ));; esac; cairn_unum "$cairn_ud"',
  '  fi',
  '}',
  '# cairn_ucpu FILE: sets cairn_un to the CPU ms of this shell\'s waited children (`times`\' second line; FILE is scratch).',
  'cairn_ucpu() {',
  '  times > "$1"',
  '  cairn_uu=; cairn_us=',
  '  { read -r cairn_uu cairn_us; read -r cairn_uu cairn_us; } < "$1"',
  '  cairn_usec "$cairn_uu"; cairn_ucu=$cairn_un',
  '  cairn_usec "$cairn_us"; cairn_un=$((cairn_ucu + cairn_un))',
  '}',
].join('\n') + '\n';

/** The shell functions (POSIX sh, `ps` and `awk`). */
export const USAGE_SH_FUNCTIONS = String.raw`# Usage of the program's process tree (runner usage/usage-sh.ts).
`+
  NUMBERS +
  String.raw`cairn_ustart() { cairn_ucpu "$1.times"; cairn_u0=$cairn_un; cairn_ums; cairn_ut0=$cairn_un; }
cairn_usample() {
  { ps -e -o pid= -o ppid= -o rss= 2>/dev/null; echo '--'
    if command -v nvidia-smi >/dev/null 2>&1; then
      nvidia-smi --query-compute-apps=pid,used_memory,gpu_uuid --format=csv,noheader,nounits 2>/dev/null; echo '--'
      nvidia-smi --query-gpu=uuid,utilization.gpu --format=csv,noheader,nounits 2>/dev/null
    fi
  } | awk -v r="$1" '
    $0 == "--" { part++; next }
    part == 0 { p[$1] = $2; m[$1] = $3; next }
    part == 1 { gsub(/ /, ""); split($0, f, ","); if (f[2] ~ /^[0-9]+$/) { ap[++na] = f[1]; am[na] = f[2]; ag[na] = f[3] } next }
    part == 2 { gsub(/ /, ""); split($0, f, ","); if (f[2] ~ /^[0-9]+$/) gu[f[1]] = f[2]; next }
    END {
      if (!(r in p)) { print "0 -1 -1"; exit }
      t[r] = 1
      do { c = 0; for (x in p) if (!(x in t) && (p[x] in t)) { t[x] = 1; c = 1 } } while (c)
      s = 0; for (x in t) s += m[x]
      g = (part >= 2) ? 0 : -1; u = 0; n = 0
      for (i = 1; i <= na; i++) if (ap[i] in t) { g += am[i]; if (!(ag[i] in seen) && (ag[i] in gu)) { seen[ag[i]] = 1; u += gu[ag[i]]; n++ } }
      printf "%d %d %s\n", s, g, (n > 0 ? sprintf("%d", u / n) : "-1")
    }'
}
cairn_uloop() {
  cairn_upk=0; cairn_upg=-1; cairn_uus=0; cairn_uun=0
  while kill -0 "$1" 2>/dev/null; do
    set -- "$1" "$2" $(cairn_usample "$1")
    [ "$3" -gt "$cairn_upk" ] && cairn_upk=$3
    [ "$4" -gt "$cairn_upg" ] && cairn_upg=$4
    [ "$5" -ge 0 ] && { cairn_uus=$((cairn_uus + $5)); cairn_uun=$((cairn_uun + 1)); }
    echo "$cairn_upk $cairn_upg $cairn_uus $cairn_uun" > "$2.tmp" && mv -f "$2.tmp" "$2"
    set -- "$1" "$2"
    sleep ${SH_SAMPLE_SECONDS}
  done
}
cairn_uwrite() {
  cairn_ucpu "$2.times"; cairn_ucpu1=$cairn_un; cairn_ums; cairn_ut1=$cairn_un
  cairn_wpk=0; cairn_wpg=-1; cairn_wus=0; cairn_wun=0
  if [ -f "$2" ]; then read -r cairn_wpk cairn_wpg cairn_wus cairn_wun < "$2" || :; fi
  cairn_unum "$cairn_wpk"; cairn_wpk=$cairn_un; cairn_unum "$cairn_wus"; cairn_wus=$cairn_un; cairn_unum "$cairn_wun"; cairn_wun=$cairn_un
  case "$cairn_wpg" in -1) ;; *) cairn_unum "$cairn_wpg"; cairn_wpg=$cairn_un;; esac
  cairn_ugpu=
  [ "$cairn_wpg" -ge 0 ] && cairn_ugpu=",\"gpuPeakMemoryBytes\":$((cairn_wpg * 1048576))"
  [ "$cairn_wun" -gt 0 ] && cairn_ugpu="$cairn_ugpu,\"gpuUtilizationPercent\":$((cairn_wus / cairn_wun))"
  printf '{"executor":"%s","wallMs":%d,"cpuMs":%d,"cpuScope":"tree","peakMemoryBytes":%d,"memoryKind":"rss","memoryScope":"tree"%s,"sampleIntervalMs":${SH_SAMPLE_SECONDS * 1000},"exitCode":%d,"signal":null}\n' \
    "$3" "$((cairn_ut1 - cairn_ut0))" "$((cairn_ucpu1 - cairn_u0))" "$((cairn_wpk * 1024))" "$cairn_ugpu" "$4" > "$1.tmp" && mv -f "$1.tmp" "$1"
  rm -f "$2" "$2.times"
}
`;
