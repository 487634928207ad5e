#!/usr/bin/env bash
# Runs fxray's fuzz targets for a fixed number of executions each, seeded from the real fixtures
# in ../tests/fixtures and the test data; prints one line per target.
#
#   fuzz/run.sh [RUNS] [TARGET...]       # RUNS default 1,000,000; TARGET default: all
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). Crashes are kept in
# fuzz/artifacts/<target>/ by libFuzzer; a crash fails the script.
# No pipefail: `find | head` ends its pipe early on purpose.
set -eu
cd "$(dirname "$0")"
runs="${1:-1000000}"
shift || true
if [ $# -gt 0 ]; then targets=("$@"); else mapfile -t targets < <(cargo +nightly fuzz list); fi
fixtures=../tests/fixtures
data=../tests/data

seed() { # target, files…
    local t="$1"; shift
    mkdir -p "corpus/$t"
    for f in "$@"; do
        [ -f "$f" ] && cp -n "$f" "corpus/$t/$(echo "$f" | tr '/' '_')" 2>/dev/null || true
    done
}

small() { find "$@" -type f -size -64k 2>/dev/null | sort | head -300; }

for t in "${targets[@]}"; do
    case "$t" in
        fx_text) mapfile -t s < <(small "$fixtures" \( -name '*graph*.txt' -o -name 'fx_graph_*.py' \)) ;;
        debug_log) mapfile -t s < <(small "$fixtures" -name '*.log') ;;
        output_code) mapfile -t s < <(small "$fixtures" -name 'output_code.py') ;;
        npu_smi) mapfile -t s < <(small "$data/npu_smi") ;;
        file_names)
            mkdir -p corpus/file_names
            for c in "$fixtures"/*/*; do
                [ -d "$c" ] && (cd "$c" && find . -type f | head -400) > "corpus/file_names/$(basename "$c")"
            done
            s=() ;;
        trace_json) mapfile -t s < <(small "$fixtures" -name '*.json' -path '*aclgraph*') ;;
        npy) mapfile -t s < <(find "$fixtures" -name '*.npy' -size -16k | sort | head -300) ;;
        pt) mapfile -t s < <(find "$data/pt" "$fixtures" -name '*.pt' -size -16k | sort | head -300) ;;
        msprobe) mapfile -t s < <(small "$fixtures" \( -name 'dump.json' -o -name 'stack.json' -o -name 'construct.json' \)) ;;
        autotune) mapfile -t s < <(small "$data/autotune") ;;
        archive) # a small pass file packed both ways (a zip seed, if zip is installed)
            mkdir -p corpus/archive
            d="$(dirname "$(find "$fixtures" -name dynamo_out_graph.txt -size -16k | sort | head -1)")"
            tar czf corpus/archive/seed.tgz -C "$d" dynamo_out_graph.txt
            tar cf corpus/archive/seed.tar -C "$d" dynamo_out_graph.txt
            (cd "$d" && zip -q - dynamo_out_graph.txt) > corpus/archive/seed.zip 2>/dev/null || true
            s=() ;;
        *) s=() ;;
    esac
    seed "$t" "${s[@]}"
    log="$(mktemp)"
    if ! cargo +nightly fuzz run --sanitizer none "$t" "corpus/$t" -- \
        -runs="$runs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 >"$log" 2>&1; then
        tail -40 "$log"
        echo "$t: CRASH (see fuzz/artifacts/$t/)"
        exit 1
    fi
    done_line="$(grep -E '^Done [0-9]+ runs' "$log" | tail -1)"
    cov="$(grep -oE 'cov: [0-9]+' "$log" | tail -1)"
    echo "$t: ${done_line:-no summary} (${cov:-cov: ?}, corpus $(ls "corpus/$t" | wc -l) files)"
done
