#!/usr/bin/env bash
# The device benchmarks' data (.devdata/, ignored by git) rebuilt in a new checkout, as
# session 67 did (bench/results/nvidia-h100/seeded/s67/README.md):
#   1. the `fetch` tool: github:at-cg/minichain and
#      github:lifecn/Pangenome-graph-for-bacterial-pathogens (git dirs under /work/.mirror);
#   2. bash bench/make_devdata.sh [MIRROR_DIR]        (default /work/.mirror; ~3 min, 2 cores)
# Writes .devdata/bac2/{MHC,Mbovis}.gfa.gz, mhc100k.fq.gz, Mbovis100k.fq.gz and
# .devdata/bac2_more/4Sim.gfa.gz, 4Sim100k.fq.gz (what bench/device_threads.sh and
# `s2g bench devices` read), checking the PGGB graphs' SHA-256 (bench/results/cpu-dev/
# bacterial_s54/README.md). Reads: `python -m bench.sample_fastq --reads 200000 --read-len 150
# --error 0.01 --indel-share 0.2 --seed 7`; MHC and 4Sim keep the first 100,000, M. bovis
# reads 100,000-199,999 (as in session 55).
set -euo pipefail
mirror=${1:-/work/.mirror}
py=${PYTHON:-python}
mhc="git --git-dir=$mirror/at-cg+minichain/repo"
bac="git --git-dir=$mirror/lifecn+Pangenome-graph-for-bacterial-pathogens/repo"
mkdir -p .devdata/bac2 .devdata/bac2_more /tmp/devdata
# MHC-CHM13.0.gfa.gz as committed in db3f031 (no longer at the repository's HEAD)
$mhc cat-file blob "$($mhc rev-parse db3f031:data/v1.3/Graphs/MHC-CHM13.0.gfa.gz)" \
  > .devdata/bac2/MHC.gfa.gz
$bac show HEAD:Mbovis/vg_deconstruct/3bovis_restart1_1k95.gfa > /tmp/devdata/Mbovis.gfa
$bac show HEAD:ESR_pangenome_pipeline_v2.0/4Sim_1k96/4Sim.1k96.gfa > /tmp/devdata/4Sim.gfa
sha256sum -c - <<'EOF'
f3a6d15839bf7e4ba2d80bba056fb221be8f76f431e7812b39217ed79618ecf0  /tmp/devdata/Mbovis.gfa
e0861d04493a93b1577d571c01d678ae1beced60368aad7da19f033e2f0b6a11  /tmp/devdata/4Sim.gfa
EOF
zcat .devdata/bac2/MHC.gfa.gz > /tmp/devdata/MHC.gfa
gzip -c /tmp/devdata/Mbovis.gfa > .devdata/bac2/Mbovis.gfa.gz
gzip -c /tmp/devdata/4Sim.gfa > .devdata/bac2_more/4Sim.gfa.gz
for g in MHC Mbovis 4Sim; do
  $py -m bench.sample_fastq --graph "/tmp/devdata/$g.gfa" --reads 200000 --read-len 150 \
    --error 0.01 --indel-share 0.2 --seed 7 --out "/tmp/devdata/${g}200k.fq"
done
head -n 400000 /tmp/devdata/MHC200k.fq | gzip -1 > .devdata/bac2/mhc100k.fq.gz
tail -n +400001 /tmp/devdata/Mbovis200k.fq | gzip -1 > .devdata/bac2/Mbovis100k.fq.gz
head -n 400000 /tmp/devdata/4Sim200k.fq | gzip -1 > .devdata/bac2_more/4Sim100k.fq.gz
ls -l .devdata/bac2 .devdata/bac2_more
