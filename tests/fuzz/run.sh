#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan + LSan) and runs each for a bounded time.
#   tests/fuzz/run.sh                        # every target, 60 s each
#   tests/fuzz/run.sh 600                    # every target, 10 min each
#   tests/fuzz/run.sh 60 create_request      # one target
# Seeds are read from tests/fuzz/corpus/<target> (never written); what the fuzzer finds goes to
# build/fuzz/corpus/<target>, a crashing input to build/fuzz/artifacts/. Exits non-zero on any finding.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-60}"
shift || true
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(create_request byte_range image_decoder upstream_answer media_path request_framing task_template
    http_task_answer)
fi
deploy/install-deps.sh
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j"$(nproc)"
mkdir -p build/fuzz/artifacts
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
summary=()
status=0
for t in "${targets[@]}"; do
  mkdir -p "build/fuzz/corpus/$t"
  dict=()
  [[ -f "tests/fuzz/$t.dict" ]] && dict=("-dict=tests/fuzz/$t.dict")
  log="build/fuzz/$t.log"
  echo "fuzzing $t for ${seconds}s"
  if "build/fuzz/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="build/fuzz/artifacts/$t-" "${dict[@]}" \
      "build/fuzz/corpus/$t" "tests/fuzz/corpus/$t" >"$log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo "?")
    summary+=("$(printf '%-16s clean  %10s runs  %6s edges  %4ss' "$t" "$runs" "$cov" "$seconds")")
  else
    status=1
    summary+=("$(printf '%-16s FOUND A PROBLEM: see %s and build/fuzz/artifacts/' "$t" "$log")")
    tail -40 "$log"
  fi
done
printf '%s\n' "${summary[@]}"
exit "$status"
