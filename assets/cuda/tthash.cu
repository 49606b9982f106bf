// tthash64-v1 on the GPU (docs/hashing.md): each word's mix, keyed by its
// global index, summed with 64-bit atomics. Integer addition is exact in any
// order, so the sum equals the CPU's whatever the launch configuration.
// The host applies the final fmix64 with the length.
//
// Regenerate the PTX in this folder with ./regenerate.sh (needs nvcc).

#include <stdint.h>

#define SEED 0x243f6a8885a308d3ULL
#define STEP 0x9e3779b97f4a7c15ULL
#define MAX_DIMS 6

__device__ __forceinline__ uint64_t mix_word(uint64_t w, uint64_t key) {
    uint64_t x = w ^ key;
    uint64_t lo = x & 0xffffffffULL;
    uint64_t hi = x >> 32;
    return lo * hi + ((x << 32) | (x >> 32));
}

__device__ __forceinline__ void add_sum(uint64_t sum, unsigned long long *out) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        sum += __shfl_down_sync(0xffffffffu, sum, offset);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(out, (unsigned long long)sum);
    }
}

// Contiguous bytes whose address is 16-byte aligned: 16 bytes per load.
extern "C" __global__ void tthash_contiguous(const uint8_t *data, uint64_t nbytes,
                                             unsigned long long *out) {
    const ulonglong2 *chunks = reinterpret_cast<const ulonglong2 *>(data);
    uint64_t nchunks = nbytes / 16;
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    uint64_t sum = 0;
    uint64_t j = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    // Four loads in flight per thread keep the memory system busy.
    for (; j + 3 * stride < nchunks; j += 4 * stride) {
        ulonglong2 c[4];
#pragma unroll
        for (int u = 0; u < 4; u++) c[u] = __ldg(&chunks[j + u * stride]);
#pragma unroll
        for (int u = 0; u < 4; u++) {
            uint64_t k = SEED + (2 * (j + u * stride) + 1) * STEP;
            sum += mix_word(c[u].x, k) + mix_word(c[u].y, k + STEP);
        }
    }
    for (; j < nchunks; j += stride) {
        ulonglong2 c = __ldg(&chunks[j]);
        uint64_t k = SEED + (2 * j + 1) * STEP;
        sum += mix_word(c.x, k) + mix_word(c.y, k + STEP);
    }
    // The last 0..15 bytes: at most two words, zero-padded.
    uint64_t first = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    uint64_t tail_words = (nbytes - nchunks * 16 + 7) / 8;
    if (first < tail_words) {
        uint64_t word_index = nchunks * 2 + first;
        uint64_t w = 0;
        for (int b = 0; b < 8; b++) {
            uint64_t at = word_index * 8 + b;
            if (at < nbytes) w |= (uint64_t)data[at] << (8 * b);
        }
        sum += mix_word(w, SEED + (word_index + 1) * STEP);
    }
    add_sum(sum, out);
}

struct Dims {
    uint64_t shape[MAX_DIMS];
    uint64_t stride[MAX_DIMS];  // in elements
};

// Byte offset of logical element e.
__device__ __forceinline__ uint64_t element_offset(uint64_t e, const Dims &d, int ndim,
                                                   uint64_t itemsize) {
    uint64_t offset = 0;
    for (int i = ndim - 1; i >= 0; i--) {
        uint64_t n = d.shape[i];
        offset += (e % n) * d.stride[i];
        e /= n;
    }
    return offset * itemsize;
}

// Any strided view: each thread assembles whole words from elements read in
// logical order.
extern "C" __global__ void tthash_strided(const uint8_t *data, uint64_t numel, uint64_t itemsize,
                                          int ndim, Dims dims, unsigned long long *out) {
    uint64_t nbytes = numel * itemsize;
    uint64_t nwords = (nbytes + 7) / 8;
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    uint64_t sum = 0;
    for (uint64_t w = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; w < nwords; w += stride) {
        uint64_t word = 0;
        if (itemsize <= 8 && 8 % itemsize == 0) {
            uint64_t per_word = 8 / itemsize;
            uint64_t e0 = w * per_word;
            for (uint64_t k = 0; k < per_word && e0 + k < numel; k++) {
                const uint8_t *p = data + element_offset(e0 + k, dims, ndim, itemsize);
                uint64_t v;
                switch (itemsize) {
                    case 1: v = *p; break;
                    case 2: v = *reinterpret_cast<const uint16_t *>(p); break;
                    case 4: v = *reinterpret_cast<const uint32_t *>(p); break;
                    default: v = *reinterpret_cast<const uint64_t *>(p); break;
                }
                word |= v << (8 * itemsize * k);
            }
        } else {
            for (int b = 0; b < 8; b++) {
                uint64_t at = w * 8 + b;
                if (at >= nbytes) break;
                const uint8_t *p = data + element_offset(at / itemsize, dims, ndim, itemsize);
                word |= (uint64_t)p[at % itemsize] << (8 * b);
            }
        }
        sum += mix_word(word, SEED + (w + 1) * STEP);
    }
    add_sum(sum, out);
}
