# Draws docs/benchmarks.png from the data files bench/run_bench.py writes.
#   gnuplot -e "dir='DATA_DIR'; out='docs/benchmarks.png'" bench/benchmarks.gp
# DATA_DIR/seq.dat     label  µs-per-call          (raw libcurl, studentsvc, Python requests)
# DATA_DIR/batch.dat   label  speed-up  ideal       (concurrency 16 and 64)
# DATA_DIR/decode.dat  label  ns-per-decode         (json::parse, decode_student)
set terminal pngcairo size 1650,520 font "DejaVu Sans,10" noenhanced
set output out
set multiplot layout 1,3 title "studentsvc benchmarks (loopback, one run of scripts/bench.sh)"

set style data histograms
set style histogram clustered gap 1
set xtics nomirror scale 0
set style fill solid 0.85 border -1
set grid ytics
set key top left
set yrange [0:*]
set offsets 0, 0, graph 0.12, 0

set title "Sequential get_student over keep-alive: µs per call"
unset key
set logscale y
set yrange [10:*]
set offsets 0, 0, 0, 0
plot dir."/seq.dat" using 2:xtic(1) linecolor rgb "#4472c4", \
     "" using 0:($2*1.15):(sprintf("%.1f", $2)) with labels notitle
unset logscale y
set yrange [0:*]
set offsets 0, 0, graph 0.12, 0

set title "1,000 lookups, 10 ms server latency: speed-up over sequential"
set key top left
plot dir."/batch.dat" using 2:xtic(1) title "get_students" linecolor rgb "#70ad47", \
     "" using 3 title "ideal (latency-bound)" linecolor rgb "#a5a5a5", \
     "" using ($0-0.17):($2+2):(sprintf("%.1f", $2)) with labels notitle, \
     "" using ($0+0.17):($3+2):(sprintf("%.1f", $3)) with labels notitle

set title "Decoding one StudentExtended body: ns"
unset key
plot dir."/decode.dat" using 2:xtic(1) linecolor rgb "#ed7d31", \
     "" using 0:($2*1.04):(sprintf("%.0f", $2)) with labels notitle

unset multiplot
