#!/usr/bin/env bash
# Proves the CI bench gate (issue 22): builds the current HEAD untouched and in sabotaged
# variants, each in its own throwaway worktree, runs the CI form of the bench (`node
# dist/bench/run.js`, what `pnpm bench` runs) in each, round-robin, and prints which gates failed. Run by hand,
# never by CI (a pass over every variant takes about an hour on the 2-core machine):
#
#   scripts/gate-sabotage.sh [--variants untouched,ingest-spin,...] [--rounds N] [-- BENCH ARGS]
#
# Variants (each a one-line edit, asserted to apply, so a moved anchor fails loudly):
#   untouched     HEAD as it is: the gate must pass
#   ingest-spin   the ingest worker spins 2 ms per task (the issue's sabotage)
#   ingest-1.5x   the ingest worker spins half of each task's own time: a worker path 1.5× slower
#   push-1.5x     main spins 0.85 ms before each notification it writes: half the floor profile's
#                 push p50 (1.7 ms end to end here), so the probe's push p50 is ~1.5× slower
#   stdout        main writes one stray line to stdout before serving MCP
# BENCH ARGS go to run.js (e.g. `-- --only pipeline,floor,push_ref,ingest_ref` for a quick look;
# the proof is the default, whole CI form). Every variant's output is kept under $OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VARIANTS=untouched,ingest-spin,ingest-1.5x,push-1.5x,stdout
ROUNDS=1
BENCH_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --variants) VARIANTS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --) shift; BENCH_ARGS=("$@"); break ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
OUT=${OUT:-$(mktemp -d /tmp/gate-sabotage.XXXXXX)}
mkdir -p "$OUT"
WT_BASE=$(mktemp -d /tmp/gate-sabotage-wt.XXXXXX)
cleanup() {
  for d in "$WT_BASE"/*; do [ -d "$d" ] && git -C "$ROOT" worktree remove --force "$d" >/dev/null 2>&1 || true; done
  rm -rf "$WT_BASE"
  git -C "$ROOT" worktree prune
}
trap cleanup EXIT

# node -e edit: replace ANCHOR in FILE by REPLACEMENT, once; exit 3 when the anchor is gone
edit() {
  node -e '
    const fs = require("node:fs");
    const [file, anchor, repl] = process.argv.slice(1);
    const s = fs.readFileSync(file, "utf8");
    if (!s.includes(anchor)) { console.error(`sabotage anchor not found in ${file}: ${anchor}`); process.exit(3); }
    fs.writeFileSync(file, s.replace(anchor, repl));
  ' "$@"
}

sabotage() {
  local v=$1 dir=$2
  case "$v" in
    untouched) ;;
    ingest-spin)
      edit "$dir/workers/ingest-runner.ts" "    const t = core.runTask(task.items, task.recvTime);" \
        "    const t = core.runTask(task.items, task.recvTime);
    for (const end = performance.now() + 2; performance.now() < end; );" ;;
    ingest-1.5x)
      edit "$dir/workers/ingest-runner.ts" "    const t = core.runTask(task.items, task.recvTime);" \
        "    const s0 = performance.now();
    const t = core.runTask(task.items, task.recvTime);
    for (const end = performance.now() + (performance.now() - s0) * 0.5; performance.now() < end; );" ;;
    push-1.5x)
      edit "$dir/src/domain/streaming/stream-state.ts" "    let written: Promise<boolean>;" \
        "    for (const end = performance.now() + 0.85; performance.now() < end; );
    let written: Promise<boolean>;" ;;
    stdout)
      edit "$dir/src/main.ts" "  mcp = await startMcpStdio({" \
        "  process.stdout.write('a stray line\\n');
  mcp = await startMcpStdio({" ;;
    *) echo "unknown variant: $v" >&2; exit 2 ;;
  esac
}

declare -a SUMMARY=()
IFS=, read -ra LIST <<<"$VARIANTS"
# every variant built first, then run round-robin (untouched, sabotaged, untouched, …), so each
# round's variants see the same neighbours
for v in "${LIST[@]}"; do
  dir="$WT_BASE/$v"
  git -C "$ROOT" worktree add -q --detach "$dir" HEAD
  sabotage "$v" "$dir"
  (cd "$dir" && pnpm install --frozen-lockfile --offline >/dev/null 2>&1 && pnpm build >"$OUT/$v.build.log" 2>&1) || { echo "$v: build failed, see $OUT/$v.build.log" >&2; exit 1; }
done
for r in $(seq 1 "$ROUNDS"); do
  for v in "${LIST[@]}"; do
    dir="$WT_BASE/$v"
    log="$OUT/$v.$r.log"
    set +e
    (cd "$dir" && node dist/bench/run.js "${BENCH_ARGS[@]}" >"$log" 2>&1)
    code=$?
    set -e
    # the run's figures, kept beside its log (the worktree goes)
    for j in "$dir"/bench/results/2*.json; do [ -f "$j" ] && mv "$j" "$OUT/$v.$r.json"; done
    gate=$(grep -E '^gate: ' "$log" | tail -1)
    line="$v round $r: exit $code — ${gate:-no gate line (see $log)}"
    echo "$line"
    SUMMARY+=("$line")
  done
done
echo
echo "== gate-sabotage at $(git -C "$ROOT" rev-parse --short HEAD), bench args: ${BENCH_ARGS[*]:-(CI form)}; logs in $OUT"
printf '%s\n' "${SUMMARY[@]}"
