"""Registers, spills and SASS of the long-window kernel without a GPU (ptxas + cuobjdump).

    python -m bench.sass [--strip 32] [--mode local|global] [--no-prmt] [--maxreg 128]
                         [--out DIR]

Compiles the kernel of s2g/trace/long/source.py to PTX for sm_90
(``numba.cuda.compile_ptx``, as the tests do), assembles it with ptxas at the register
cap ``get_kernel`` uses, and prints ptxas's register and spill counts and the SASS
instructions a row in the cells (from the first row's substitution PRMT to the last
row's; PRMT tables only). ptxas and
cuobjdump come from pip wheels, no driver needed: ``pip download --no-deps
"nvidia-cuda-nvcc==13.0.*" nvidia-cuda-cuobjdump``, unzip both into a folder and pass
``--bin FOLDER/nvidia/cu13/bin`` (or set PTXAS_BIN); installed wheels are found by
themselves. Session 16 found with it what the device's ncu had not shown: 241 registers
(one block an SM), and a 64-bit division call in every step (bench/NOTES.md run 11).
"""
import argparse
import collections
import glob
import os
import re
import subprocess
import sys
import tempfile
import types


def _bin(given):
    for d in filter(None, [given, os.environ.get("PTXAS_BIN")]):
        if os.path.exists(os.path.join(d, "ptxas")):
            return d
    for p in sys.path:
        for d in glob.glob(os.path.join(p, "nvidia", "cu*", "bin")):
            if os.path.exists(os.path.join(d, "ptxas")):
                return d
    sys.exit("bench.sass: no ptxas found: pass --bin (see the module doc)")


def instructions(sass):
    """(offset, text) of each SASS instruction in cuobjdump's listing."""
    out = []
    for line in sass.splitlines():
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if m:
            out.append((int(m.group(1), 16), m.group(2).strip()))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--strip", type=int, default=None, help="rows a strip (default S)")
    ap.add_argument("--mode", choices=("local", "global"), default="local",
                    help="the local kernel or the global/semiglobal one")
    ap.add_argument("--no-prmt", action="store_true", help="compare + select substitution")
    ap.add_argument("--maxreg", type=int, default=None, help="register cap (default MAXREG)")
    ap.add_argument("--bin", default=None, help="folder with ptxas and cuobjdump")
    ap.add_argument("--out", default=None, help="write the PTX and SASS here")
    args = ap.parse_args(argv)
    b = _bin(args.bin)
    # compile_ptx asks numba-cuda for "the current device" even without one (tests do this)
    import numba.cuda.dispatcher as disp
    disp.get_current_device = lambda: types.SimpleNamespace(compute_capability=(9, 0))
    from s2g.trace.long import plan, source
    S = plan.S if args.strip is None else args.strip
    cap = plan.MAXREG if args.maxreg is None else args.maxreg
    ptx = source.compile_ptx((9, 0), S, args.mode == "local", not args.no_prmt)
    out = args.out or tempfile.mkdtemp()
    os.makedirs(out, exist_ok=True)
    name = f"long_S{S}_{args.mode}{'_cmp' if args.no_prmt else ''}"
    with open(os.path.join(out, name + ".ptx"), "w") as fh:
        fh.write(ptx)
    cmd = [os.path.join(b, "ptxas"), "-arch=sm_90", "-v", os.path.join(out, name + ".ptx"),
           "-o", os.path.join(out, name + ".cubin")]
    if cap:
        cmd.insert(3, f"-maxrregcount={cap}")
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit(p.stderr[-2000:])
    info = [ln.split("info    :")[-1].strip() for ln in p.stderr.splitlines()
            if "Used" in ln or "spill" in ln]
    sass = subprocess.run([os.path.join(b, "cuobjdump"), "-sass",
                           os.path.join(out, name + ".cubin")],
                          capture_output=True, text=True, check=True).stdout
    with open(os.path.join(out, name + ".sass"), "w") as fh:
        fh.write(sass)
    ins = instructions(sass)
    print(f"{name}, register cap {cap or 'none'}: " + "; ".join(info))
    print(f"  {len(ins)} SASS instructions; calls: {sum('CALL' in t for _, t in ins)}; "
          f"barriers: {sum('BAR.SYNC' in t for _, t in ins)}")
    at = [i for i, (_, t) in enumerate(ins) if "PRMT" in t]
    if len(at) >= 2 and not args.no_prmt:
        cells = ins[at[0]:at[-1]]
        ops = collections.Counter(t.split()[1] if t.startswith("@") else t.split()[0]
                                  for _, t in cells)
        print(f"  cells: {len(cells)} instructions for {len(at) - 1} rows "
              f"({len(cells) / (len(at) - 1):.1f} a row); spill loads there "
              f"{sum(op.startswith('LDL') for op in ops.elements())}")
        print("  " + ", ".join(f"{k} {v}" for k, v in ops.most_common(12)))
    print(f"  PTX, cubin and SASS in {out}")


if __name__ == "__main__":
    main()
