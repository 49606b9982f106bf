#!/usr/bin/env bash
# Rebuilds the bundled demo pair: four steps of a simulated 12-kernel
# program in which the index_add kernel (it uses tl.atomic_add) writes a
# different value in run B at launch 17, and every consumer downstream
# diverges with it. Run from the repository root.
set -euo pipefail
cargo run --release --quiet -- synth -o assets/demo --launches 48 --autotune --inject nondet@17
