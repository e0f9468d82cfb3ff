#!/bin/bash
# old (53340a6) vs new on the 300 Mbp graph, alternating, CPU path, 100,000 reads
for r in 1 2 3 4; do
  for v in old new; do
    if [ $v = old ]; then pp=/tmp/old; d=/tmp/scale/old; else pp=/work/main; d=/tmp/scale; fi
    echo "# $v run $r"
    PYTHONPATH=$pp /work/main/.venv/bin/python -m s2g align $d/g300M.gfa $d/g300M.fq -o $d/ab_$v.gaf --timings 2>&1 | grep -E "^s2g: [0-9]|per stage|start-up|peak"
  done
done
cmp /tmp/scale/old/ab_old.gaf /tmp/scale/ab_new.gaf && echo "GAF identical"
