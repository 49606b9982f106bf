#!/usr/bin/env bash
# Rebuilds tthash.ptx from tthash.cu. PTX for compute_80 is compiled by the
# driver for the GPU it runs on (A100, H100 and later), so users need no
# CUDA toolkit: the recorder loads this text through the driver API.
set -euo pipefail
cd "$(dirname "$0")"
nvcc --ptx -O3 -arch=compute_80 -o tthash.ptx tthash.cu
