#!/usr/bin/env bash
# Renders gesso-load results as PNG with gnuplot (docs/benchmarks.md).
#
#   deploy/loadtest/plot.sh timeline TIMELINE.tsv OUT_PREFIX TITLE
#       OUT_PREFIX-throughput.png (arrivals and answers a second by request kind) and
#       OUT_PREFIX-latency.png (p50, p90, p99 a second of creates and of the busiest other kind)
#   deploy/loadtest/plot.sh sweep SWEEP.tsv OUT_PREFIX TITLE P99_LIMIT_MS CEILING
#       OUT_PREFIX.png: p50/p99 latency and achieved rate against the offered create rate
set -euo pipefail
kind="${1:-}"
data="${2:-}"
prefix="${3:-}"
title="${4:-}"
[[ -f "$data" && -n "$prefix" ]] || { sed -n 2,9p "$0"; exit 2; }
command -v gnuplot >/dev/null || { echo "plot.sh: gnuplot is not installed (deploy/install-deps.sh)" >&2; exit 1; }

case "$kind" in
  timeline)
    # Columns (gesso-load --timeline): 1 second, 2 arrivals, then six per kind: done, failed, p50, p90,
    # p99, max for create (3-8), query (9-14), poll (15-20), download (21-26).
    gnuplot <<GNUPLOT
set terminal pngcairo size 1000,420 font ",10"
set datafile separator "\t"
set key outside right top
set grid
set xlabel "seconds"
set output "$prefix-throughput.png"
set title "$title: throughput"
set ylabel "per second"
plot "$data" using (\$1+1):2 with lines lw 2 title "arrivals", \
     "" using (\$1+1):3 with lines title "create", \
     "" using (\$1+1):9 with lines title "query", \
     "" using (\$1+1):15 with lines title "poll", \
     "" using (\$1+1):21 with lines title "download", \
     "" using (\$1+1):(\$4+\$10+\$16+\$22) with lines lc rgb "red" title "not 2xx"
set output "$prefix-latency.png"
set title "$title: latency percentiles per second"
set ylabel "ms"
set logscale y
plot "$data" using (\$1+1):(\$3 > 0 ? \$5 : 1/0) with lines title "create p50", \
     "" using (\$1+1):(\$3 > 0 ? \$7 : 1/0) with lines title "create p99", \
     "" using (\$1+1):(\$9 > 0 ? \$11 : 1/0) with lines title "query p50", \
     "" using (\$1+1):(\$9 > 0 ? \$13 : 1/0) with lines title "query p99", \
     "" using (\$1+1):(\$15 > 0 ? \$17 : 1/0) with lines title "poll p50", \
     "" using (\$1+1):(\$15 > 0 ? \$19 : 1/0) with lines title "poll p99", \
     "" using (\$1+1):(\$21 > 0 ? \$25 : 1/0) with lines title "download p99"
GNUPLOT
    echo "plot.sh: $prefix-throughput.png $prefix-latency.png"
    ;;
  sweep)
    limit="${5:-50}"
    ceiling="${6:-0}"
    # Columns: 1 offered, 2 answered 200 a second, 3 share answered 200, 4 p50, 5 p90, 6 p99, 7 p99.9, 8 max.
    gnuplot <<GNUPLOT
set terminal pngcairo size 1000,480 font ",10"
set datafile separator "\t"
set key outside right top
set grid
set output "$prefix.png"
set title "$title"
set xlabel "offered creates per second"
set ylabel "latency, ms (log)"
set logscale y
set y2label "creates answered 200 per second"
set y2tics
set y2range [0:*]
set ytics nomirror
set arrow from graph 0, first $limit to graph 1, first $limit nohead dt 2 lc rgb "gray"
set label "p99 limit $limit ms" at graph 0.01, first $limit offset 0,0.7 tc rgb "gray"
if ($ceiling > 0) set arrow from $ceiling, graph 0 to $ceiling, graph 1 nohead dt 3 lc rgb "black"
if ($ceiling > 0) set label "create-transaction ceiling" at $ceiling, graph 0.95 offset 0.5,0
plot "$data" using 1:4 with linespoints title "p50", \
     "" using 1:6 with linespoints title "p99", \
     "" using 1:7 with linespoints title "p99.9", \
     "" using 1:2 axes x1y2 with linespoints lw 2 title "answered 200/s"
GNUPLOT
    echo "plot.sh: $prefix.png"
    ;;
  *)
    sed -n 2,9p "$0"
    exit 2
    ;;
esac
