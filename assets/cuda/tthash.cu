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
    // lo * hi of the two 32-bit halves: one widening 32-bit multiply.
    uint64_t product = (uint64_t)(uint32_t)x * (uint64_t)(uint32_t)(x >> 32);
    return product + ((x << 32) | (x >> 32));
}


// Results leave the device without a memset or a copy: blocks add into a
// device accumulator and count themselves in; the last block of a result
// moves the total (which also zeroes the accumulator for its next use) into
// host-mapped memory, where the host sees it arrive (slots hold all ones
// until written; an event recorded after the kernel settles any doubt).
// Without counters (`arrived` null: a CUDA graph's table, in device memory,
// which the graph zeroes at every replay) blocks add straight into `host`.
struct Results {
    unsigned long long *acc;  // device accumulators, zero between uses
    unsigned int *arrived;    // blocks done per result, zero between uses
    unsigned long long *host; // host-mapped result slots (or a graph's table)
};

// Counts the calling block in for the result at `slot`, after its atomics
// on the accumulators; true in every thread of the last block to arrive.
__device__ __forceinline__ bool last_block(const Results &r, uint32_t slot, uint32_t blocks) {
    __shared__ bool last;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(&r.arrived[slot], 1u) == blocks - 1;
        if (last) r.arrived[slot] = 0;
    }
    __syncthreads();
    if (last) __threadfence();
    return last;
}

// Adds every thread's sum into the accumulator of `slot`: warps reduce by
// shuffles, the block through shared memory, one atomic per block. The last
// block hands the total over. Call it from every thread of the block.
__device__ __forceinline__ void add_sum(uint64_t sum, const Results &r, uint32_t slot,
                                        uint32_t blocks) {
    __shared__ unsigned long long warps[32];
    for (int offset = 16; offset > 0; offset >>= 1) {
        sum += __shfl_down_sync(0xffffffffu, sum, offset);
    }
    if ((threadIdx.x & 31) == 0) warps[threadIdx.x >> 5] = sum;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long total = 0;
        for (unsigned w = 0; w < (blockDim.x + 31) / 32; w++) total += warps[w];
        atomicAdd(r.arrived ? &r.acc[slot] : &r.host[slot], total);
    }
    // Without counters, blocks add straight into the result, which its
    // holder zeroes between uses.
    if (!r.arrived) return;
    if (last_block(r, slot, blocks) && threadIdx.x == 0) {
        r.host[slot] = atomicExch(&r.acc[slot], 0ull);
    }
}

// Loads each thread has in flight before it mixes any: one load at a time
// per thread leaves the memory system idle; eight read slower than four
// (H200, with four blocks of 256 threads on a multiprocessor).
#define LOADS 4

// The units (16-byte chunks, runs of words) block `block` of `blocks`
// hashes: an equal share of `units`, cut on multiples of 8 (a warp's
// 16-byte loads then start on a 128-byte line). The host gives a table's items as many
// blocks as the device holds at once, shared by bytes: one wave, every
// block streaming its share to the end.
struct Share {
    uint64_t first, end;
};

__device__ __forceinline__ Share share_of(uint64_t units, uint64_t block, uint64_t blocks) {
    uint64_t first = (block * units / blocks) & ~7ull;
    uint64_t end = block + 1 == blocks ? units : ((block + 1) * units / blocks) & ~7ull;
    return {first, end};
}

// Contiguous bytes whose address is 16-byte aligned, 16 bytes per load,
// each thread LOADS loads at once, a warp's loads side by side in memory.
__device__ __forceinline__ uint64_t hash_contiguous(const uint8_t *data, uint64_t nbytes,
                                                    uint64_t block, uint64_t blocks) {
    const ulonglong2 *chunks = reinterpret_cast<const ulonglong2 *>(data);
    uint64_t nchunks = nbytes / 16;
    Share share = share_of(nchunks, block, blocks);
    const uint64_t step = (uint64_t)LOADS * blockDim.x;
    uint64_t sum = 0;
    for (uint64_t base = share.first + threadIdx.x; base < share.end; base += step) {
        ulonglong2 c[LOADS];
#pragma unroll
        for (int u = 0; u < LOADS; u++) {
            uint64_t j = base + u * blockDim.x;
            c[u] = j < share.end ? __ldg(&chunks[j]) : make_ulonglong2(0, 0);
        }
#pragma unroll
        for (int u = 0; u < LOADS; u++) {
            uint64_t j = base + u * blockDim.x;
            // Chunk j's words have keys SEED + (2j + 1) * STEP and the next.
            uint64_t k = SEED + (2 * j + 1) * STEP;
            if (j < share.end) sum += mix_word(c[u].x, k) + mix_word(c[u].y, k + STEP);
        }
    }
    // The last 0..15 bytes: at most two words, zero-padded.
    uint64_t first = block * blockDim.x + threadIdx.x;
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
    return sum;
}

struct Dims {
    uint64_t shape[MAX_DIMS];
    uint64_t stride[MAX_DIMS];  // in elements (hash_words: in bytes)
    uint64_t weight[MAX_DIMS];  // hash_words only: logical words per step
    // hash_words only: the divisor of each dimension's digit (the
    // innermost's: its runs) as a multiplier m and shift k (m | k << 56),
    // n / d == (n * m) >> k for every n below 2^31.
    uint64_t divisor[MAX_DIMS];
};

// n / d for n below 2^31, d given by its Dims::divisor.
__device__ __forceinline__ uint32_t divide(uint32_t n, uint64_t divisor) {
    uint64_t m = divisor & ((1ull << 56) - 1);
    return (uint32_t)(((uint64_t)n * m) >> (divisor >> 56));
}

// Byte offset of logical element e. `narrow` says every index fits in 32
// bits (fewer than 2^32 elements), where division is several times cheaper.
__device__ __forceinline__ uint64_t element_offset(uint64_t e, const Dims &d, int ndim,
                                                   uint64_t itemsize, bool narrow) {
    uint64_t offset = 0;
    if (narrow) {
        uint32_t e32 = (uint32_t)e;
        for (int i = ndim - 1; i >= 0; i--) {
            uint32_t n = (uint32_t)d.shape[i];
            offset += (uint64_t)(e32 % n) * d.stride[i];
            e32 /= n;
        }
    } else {
        for (int i = ndim - 1; i >= 0; i--) {
            uint64_t n = d.shape[i];
            offset += (e % n) * d.stride[i];
            e /= n;
        }
    }
    return offset * itemsize;
}

// Loads one element of ITEMSIZE bytes (1, 2, 4 or 8) as the low bytes of a
// word.
template <int ITEMSIZE>
__device__ __forceinline__ uint64_t load_element(const uint8_t *p) {
    if (ITEMSIZE == 1) return __ldg(p);
    if (ITEMSIZE == 2) return __ldg(reinterpret_cast<const uint16_t *>(p));
    if (ITEMSIZE == 4) return __ldg(reinterpret_cast<const uint32_t *>(p));
    return __ldg(reinterpret_cast<const unsigned long long *>(p));
}

// How hash_words loads a run of RUN words along the innermost dimension.
// READ_WORDS: each word one aligned 8-byte load. READ_PAIRS: two words per
// aligned 16-byte load (words side by side in memory), RUN = 2, 4 or 8.
// READ_ELEMENTS: each word gathered element by element, `element_stride`
// bytes apart. READ_COLUMNS: the innermost dimension's words are adjacent
// elements in memory (a transposed matrix read down its columns): RUN words
// from 8 / ITEMSIZE aligned loads of RUN elements each, `element_stride`
// apart, load k holding element k of each word; RUN = 8 / ITEMSIZE (8-byte
// loads) or 16 / ITEMSIZE (16-byte loads).
#define READ_WORDS 0
#define READ_PAIRS 1
#define READ_ELEMENTS 2
#define READ_COLUMNS 3

// Runs each thread of hash_words loads at once: about LOADS loads (a
// 16-byte load counting as two), at least one run. A run of 8 words read
// as pairs, or down the columns with 16-byte loads, is 64 bytes in flight
// for one index computation: as many bytes as the contiguous loop, where
// shorter runs read at half the device's rate (H200: attention's q, k, v
// 1.7 against 3.1 TB/s; more runs in flight spill registers).
template <int ITEMSIZE, int READ, int RUN>
__device__ constexpr int runs_in_flight() {
    constexpr int per_run = READ == READ_ELEMENTS ? RUN * (8 / ITEMSIZE) : RUN;
    return LOADS / per_run > 0 ? LOADS / per_run : 1;
}

template <int ITEMSIZE, int READ, int RUN>
__device__ __forceinline__ void load_run(const uint8_t *p, uint64_t inner_stride,
                                         uint64_t element_stride, uint64_t (&words)[RUN]) {
    constexpr int PER_WORD = 8 / ITEMSIZE;
    if (READ == READ_WORDS) {
#pragma unroll
        for (int r = 0; r < RUN; r++) {
            words[r] = __ldg(reinterpret_cast<const unsigned long long *>(p + r * inner_stride));
        }
    } else if (READ == READ_PAIRS) {
#pragma unroll
        for (int r = 0; r < RUN; r += 2) {
            ulonglong2 c = __ldg(reinterpret_cast<const ulonglong2 *>(p + r * 8));
            words[r] = c.x;
            words[r + 1] = c.y;
        }
    } else if (READ == READ_ELEMENTS) {
#pragma unroll
        for (int r = 0; r < RUN; r++) {
            uint64_t word = 0;
#pragma unroll
            for (int k = 0; k < PER_WORD; k++) {
                word |= load_element<ITEMSIZE>(p + r * inner_stride + k * element_stride)
                        << (8 * ITEMSIZE * k);
            }
            words[r] = word;
        }
    } else {
        // Each load holds element k of RUN words: 8 bytes (RUN = PER_WORD)
        // or 16 (RUN = 2 * PER_WORD, the second half holding the rest).
        constexpr int HALVES = RUN > PER_WORD ? 2 : 1;
        constexpr uint64_t MASK = ITEMSIZE == 8 ? ~0ull : (1ull << (8 * ITEMSIZE)) - 1;
        uint64_t loads[PER_WORD][HALVES];
#pragma unroll
        for (int k = 0; k < PER_WORD; k++) {
            const uint8_t *at = p + k * element_stride;
            if constexpr (HALVES == 2) {
                ulonglong2 c = __ldg(reinterpret_cast<const ulonglong2 *>(at));
                loads[k][0] = c.x;
                loads[k][1] = c.y;
            } else {
                loads[k][0] = __ldg(reinterpret_cast<const unsigned long long *>(at));
            }
        }
#pragma unroll
        for (int r = 0; r < RUN; r++) {
            uint64_t word = 0;
#pragma unroll
            for (int k = 0; k < PER_WORD; k++) {
                uint64_t half = loads[k][r / PER_WORD];
                word |= ((half >> (8 * ITEMSIZE * (r % PER_WORD))) & MASK) << (8 * ITEMSIZE * k);
            }
            words[r] = word;
        }
    }
}

// A view whose rows (its last dimension) are whole words, read in the order
// of memory rather than the logical one: permuted tensors (attention's q, k,
// v), slices of them, transposed matrices (an mm's `weight.t()`). Read in
// logical order, a warp's loads would land rows apart in memory.
//
// The view is seen as words: its last dimension split into words of
// 8 / ITEMSIZE elements. `dims` holds the words' dimensions ordered by
// memory stride, smallest last (the host sorts them): consecutive threads
// take runs of RUN words next to each other in memory. Each dimension's
// `weight` turns a word's position back into its logical index, which keys
// its mix. Strides are in bytes.
template <int ITEMSIZE, int READ, int RUN>
__device__ __forceinline__ uint64_t hash_words(const uint8_t *data, uint64_t nwords, int ndim,
                                               const Dims &dims, uint64_t element_stride,
                                               uint64_t block, uint64_t blocks) {
    constexpr int IN_FLIGHT = runs_in_flight<ITEMSIZE, READ, RUN>();
    bool narrow = nwords < 0x80000000ull;
    uint64_t nruns = nwords / RUN;
    uint64_t inner_runs = dims.shape[ndim - 1] / RUN;
    uint64_t inner_stride = dims.stride[ndim - 1], inner_weight = dims.weight[ndim - 1];
    Share share = share_of(nruns, block, blocks);
    const uint64_t step = (uint64_t)IN_FLIGHT * blockDim.x;
    uint64_t sum = 0;
    for (uint64_t base = share.first + threadIdx.x; base < share.end; base += step) {
        uint64_t words[IN_FLIGHT][RUN];
        uint64_t index[IN_FLIGHT];
#pragma unroll
        for (int u = 0; u < IN_FLIGHT; u++) {
            uint64_t t = base + u * blockDim.x;
            if (t >= share.end) break;
            uint64_t offset, w;
            if (narrow) {
                uint32_t t32 = (uint32_t)t;
                uint32_t q = divide(t32, dims.divisor[ndim - 1]);
                uint32_t digit = (t32 - q * (uint32_t)inner_runs) * RUN;
                t32 = q;
                offset = digit * inner_stride;
                w = digit * inner_weight;
                for (int i = ndim - 2; i > 0; i--) {
                    q = divide(t32, dims.divisor[i]);
                    digit = t32 - q * (uint32_t)dims.shape[i];
                    t32 = q;
                    offset += digit * dims.stride[i];
                    w += digit * dims.weight[i];
                }
                if (ndim > 1) {
                    offset += (uint64_t)t32 * dims.stride[0];
                    w += (uint64_t)t32 * dims.weight[0];
                }
            } else {
                uint64_t digit = (t % inner_runs) * RUN;
                t /= inner_runs;
                offset = digit * inner_stride;
                w = digit * inner_weight;
                for (int i = ndim - 2; i >= 0; i--) {
                    digit = t % dims.shape[i];
                    t /= dims.shape[i];
                    offset += digit * dims.stride[i];
                    w += digit * dims.weight[i];
                }
            }
            index[u] = w;
            load_run<ITEMSIZE, READ, RUN>(data + offset, inner_stride, element_stride, words[u]);
        }
#pragma unroll
        for (int u = 0; u < IN_FLIGHT; u++) {
            if (base + u * blockDim.x >= share.end) break;
#pragma unroll
            for (int r = 0; r < RUN; r++) {
                sum += mix_word(words[u][r], SEED + (index[u] + r * inner_weight + 1) * STEP);
            }
        }
    }
    return sum;
}

// Any strided view: each thread assembles whole words from elements read in
// logical order.
__device__ __forceinline__ uint64_t hash_strided(const uint8_t *data, uint64_t numel,
                                                 uint64_t itemsize, int ndim, const Dims &dims,
                                                 uint64_t block, uint64_t blocks) {
    uint64_t nbytes = numel * itemsize;
    uint64_t nwords = (nbytes + 7) / 8;
    uint64_t stride = blocks * blockDim.x;
    bool narrow = numel <= 0xffffffffull;
    uint64_t sum = 0;
    for (uint64_t w = block * blockDim.x + threadIdx.x; w < nwords; w += stride) {
        uint64_t word = 0;
        if (itemsize <= 8 && 8 % itemsize == 0) {
            uint64_t per_word = 8 / itemsize;
            uint64_t e0 = w * per_word;
            for (uint64_t k = 0; k < per_word && e0 + k < numel; k++) {
                const uint8_t *p = data + element_offset(e0 + k, dims, ndim, itemsize, narrow);
                uint64_t v;
                switch (itemsize) {
                    case 1: v = load_element<1>(p); break;
                    case 2: v = load_element<2>(p); break;
                    case 4: v = load_element<4>(p); break;
                    default: v = load_element<8>(p); break;
                }
                word |= v << (8 * itemsize * k);
            }
        } else {
            for (int b = 0; b < 8; b++) {
                uint64_t at = w * 8 + b;
                if (at >= nbytes) break;
                const uint8_t *p =
                    data + element_offset(at / itemsize, dims, ndim, itemsize, narrow);
                word |= (uint64_t)p[at % itemsize] << (8 * b);
            }
        }
        sum += mix_word(word, SEED + (w + 1) * STEP);
    }
    return sum;
}

// How an item is read: LAYOUT_CONTIGUOUS needs 16-byte alignment and no
// dims; LAYOUT_WORDS is hash_words, `read` saying how (READ_*) and `run`
// how many words per index computation; LAYOUT_STRIDED is hash_strided;
// LAYOUT_ROWS is hash_rows, whose dims hold ROW_* instead of dimensions.
#define LAYOUT_CONTIGUOUS 0
#define LAYOUT_WORDS 1
#define LAYOUT_ROWS 2
#define LAYOUT_STRIDED 3

// A LAYOUT_ROWS item's dims.shape: a row's bytes (a multiple of 16), the
// first row's result slot, the segments each row is cut into (a warp
// each), and whether the item's own slot takes the whole view's hash.
#define ROW_BYTES 0
#define ROW_SLOT 1
#define ROW_PARTS 2
#define ROW_WHOLE 3

// One tensor of a hash table.
struct Item {
    const uint8_t *data;
    uint64_t numel;
    uint64_t element_stride;  // READ_ELEMENTS, READ_COLUMNS: bytes between a word's elements
    uint32_t itemsize;
    uint32_t layout;
    uint32_t read;  // LAYOUT_WORDS: READ_*
    uint32_t ndim;
    uint32_t slot;
    uint32_t first_block;
    uint32_t blocks;
    uint32_t run;  // LAYOUT_WORDS: words per index computation (1, 2, 4 or 8)
    Dims dims;
};

// hash_words for the item's element size, way of reading and run, of the
// view at `data` (the item's, or one row of a view read as the item says).
__device__ __forceinline__ uint64_t words_of(const Item &item, const uint8_t *data,
                                             uint64_t block, uint64_t blocks) {
    uint64_t nwords = item.numel * item.itemsize / 8;
#define WORDS(ITEMSIZE, READ, RUN)                                                          \
    hash_words<ITEMSIZE, READ, RUN>(data, nwords, item.ndim, item.dims, item.element_stride, \
                                    block, blocks)
    switch (item.read) {
        case READ_WORDS:
            return item.run == 4 ? WORDS(8, READ_WORDS, 4) : WORDS(8, READ_WORDS, 1);
        case READ_PAIRS:
            return item.run == 8   ? WORDS(8, READ_PAIRS, 8)
                   : item.run == 4 ? WORDS(8, READ_PAIRS, 4)
                                   : WORDS(8, READ_PAIRS, 2);
        case READ_ELEMENTS:
            switch (item.itemsize) {
                case 1: return item.run == 4 ? WORDS(1, READ_ELEMENTS, 4) : WORDS(1, READ_ELEMENTS, 1);
                case 2: return item.run == 4 ? WORDS(2, READ_ELEMENTS, 4) : WORDS(2, READ_ELEMENTS, 1);
                default: return item.run == 4 ? WORDS(4, READ_ELEMENTS, 4) : WORDS(4, READ_ELEMENTS, 1);
            }
        default:
            switch (item.itemsize) {
                case 1: return WORDS(1, READ_COLUMNS, 8);
                case 2: return item.run == 8 ? WORDS(2, READ_COLUMNS, 8) : WORDS(2, READ_COLUMNS, 4);
                default: return item.run == 4 ? WORDS(4, READ_COLUMNS, 4) : WORDS(4, READ_COLUMNS, 2);
            }
    }
#undef WORDS
}

// Adds each lane's sum into result `slot`, shared by `parts` warps: lane 0
// adds the warp's total into the accumulator and counts the warp in; the
// last hands the total over (one warp alone writes the result). Call it
// from every lane of the warp.
__device__ __forceinline__ void add_warp_sum(uint64_t sum, const Results &r, uint32_t slot,
                                             uint32_t parts) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        sum += __shfl_down_sync(0xffffffffu, sum, offset);
    }
    if ((threadIdx.x & 31) != 0) return;
    if (parts == 1) {
        r.host[slot] = sum;
        return;
    }
    atomicAdd(&r.acc[slot], sum);
    __threadfence();
    if (atomicAdd(&r.arrived[slot], 1u) == parts - 1) {
        r.arrived[slot] = 0;
        __threadfence();
        r.host[slot] = atomicExch(&r.acc[slot], 0ull);
    }
}

// Contiguous 16-byte aligned rows of whole 16-byte chunks, each row hashed
// as the tensor it would be alone (`rows`) in the same read as the whole
// view: warps take (row, segment) units one after another, and each chunk
// is mixed twice, keyed by its index in its row (the warp's sum, the row's
// hash) and in the view (the thread's sum, returned: the view's hash).
__device__ __forceinline__ uint64_t hash_rows(const Item &item, uint64_t block,
                                              const Results &r) {
    const ulonglong2 *chunks = reinterpret_cast<const ulonglong2 *>(item.data);
    uint64_t row_chunks = item.dims.shape[ROW_BYTES] / 16;
    uint64_t rows = item.numel * item.itemsize / item.dims.shape[ROW_BYTES];
    uint32_t parts = (uint32_t)item.dims.shape[ROW_PARTS];
    uint32_t row_slot = (uint32_t)item.dims.shape[ROW_SLOT];
    uint64_t warps_per_block = blockDim.x / 32;
    uint64_t warps = (uint64_t)item.blocks * warps_per_block;
    uint64_t lane = threadIdx.x & 31;
    uint64_t sum = 0;
    for (uint64_t unit = block * warps_per_block + threadIdx.x / 32; unit < rows * parts;
         unit += warps) {
        uint64_t row = unit / parts;
        Share segment = share_of(row_chunks, unit % parts, parts);
        const ulonglong2 *row_start = chunks + row * row_chunks;
        uint64_t row_sum = 0;
        for (uint64_t base = segment.first + lane; base < segment.end; base += LOADS * 32) {
            ulonglong2 c[LOADS];
#pragma unroll
            for (int u = 0; u < LOADS; u++) {
                uint64_t j = base + u * 32;
                c[u] = j < segment.end ? __ldg(&row_start[j]) : make_ulonglong2(0, 0);
            }
#pragma unroll
            for (int u = 0; u < LOADS; u++) {
                uint64_t j = base + u * 32;
                if (j >= segment.end) continue;
                uint64_t k = SEED + (2 * j + 1) * STEP;
                uint64_t whole = SEED + (2 * (row * row_chunks + j) + 1) * STEP;
                row_sum += mix_word(c[u].x, k) + mix_word(c[u].y, k + STEP);
                sum += mix_word(c[u].x, whole) + mix_word(c[u].y, whole + STEP);
            }
        }
        add_warp_sum(row_sum, r, row_slot + (uint32_t)row, parts);
    }
    return sum;
}

#define TABLE_ITEMS 16

// Up to TABLE_ITEMS hashes in one launch: the grid is every item's blocks
// one after another.
struct Table {
    Results results;
    uint32_t count;
    Item items[TABLE_ITEMS];
};

// At most 64 registers a thread, so that four blocks of 256 threads fit on
// a multiprocessor: with fewer, loads in flight are too few to read at the
// device's rate; with five, the blocks' loads contend (H200: a 256 MB hash
// 4.3 TB/s with four, 3.7 with five, 2.3 with the two that 65 or more
// registers leave).
extern "C" __global__ void __launch_bounds__(256, 4)
    tthash_table(const __grid_constant__ Table table) {
    uint32_t i = 0;
    while (i + 1 < table.count && table.items[i + 1].first_block <= blockIdx.x) i++;
    const Item &item = table.items[i];
    uint64_t block = blockIdx.x - item.first_block;
    uint64_t sum;
    switch (item.layout) {
        case LAYOUT_CONTIGUOUS:
            sum = hash_contiguous(item.data, item.numel * item.itemsize, block, item.blocks);
            break;
        case LAYOUT_WORDS:
            sum = words_of(item, item.data, block, item.blocks);
            break;
        case LAYOUT_ROWS:
            sum = hash_rows(item, block, table.results);
            // Rows of a view whose hash is taken elsewhere (an input, hashed
            // before the launch): the view's sum is dropped.
            if (!item.dims.shape[ROW_WHOLE]) return;
            break;
        default:
            sum = hash_strided(item.data, item.numel, item.itemsize, item.ndim, item.dims, block,
                               item.blocks);
    }
    add_sum(sum, table.results, item.slot, item.blocks);
}

// Summary statistics of a float32, float16 or bfloat16 view, exact and in
// any order: counts and min/max keys are combined with integer atomics, and
// the absolute values are summed as integers in 64 buckets of 4 exponents
// (|x| = m * 2^e; bucket (e-1)/4 holds m << ((e-1)%4)), which the host
// scales and adds in a fixed order. No float is ever summed in parallel, so
// the result is the same on every run.
//
// out[0..64): bucket sums; out[64]: finite; [65]: NaN; [66]: infinite;
// [67]: max key; [68]: complement of the min key (0 means none).
#define STATS_BUCKETS 64
#define STATS_SLOTS 69
#define KIND_F32 0
#define KIND_F16 1
#define KIND_BF16 2

__device__ __forceinline__ uint32_t f16_to_f32_bits(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    if (exp == 0) {
        if (mant == 0) return sign;
        float f = (float)mant * 5.9604644775390625e-8f;  // exact: m * 2^-24
        return sign | __float_as_uint(f);
    }
    if (exp == 31) return sign | 0x7f800000u | (mant << 13);
    return sign | ((exp + 112) << 23) | (mant << 13);
}

// The float32 bits of the element at `p` of a float32, float16 or bfloat16
// view (the narrower ones widened exactly).
__device__ __forceinline__ uint32_t f32_bits(const uint8_t *p, int kind) {
    if (kind == KIND_F32) return *reinterpret_cast<const uint32_t *>(p);
    uint16_t half = *reinterpret_cast<const uint16_t *>(p);
    return kind == KIND_F16 ? f16_to_f32_bits(half) : (uint32_t)half << 16;
}

// Orders float bits as unsigned integers: larger key, larger value.
__device__ __forceinline__ uint32_t order_key(uint32_t bits) {
    return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

extern "C" __global__ void ttstats(const uint8_t *data, uint64_t numel, int kind, int ndim,
                                   Dims dims, Results results, uint32_t slot) {
    unsigned long long *out = results.acc + slot;
    __shared__ unsigned long long buckets[STATS_BUCKETS];
    __shared__ unsigned long long counts[3];
    __shared__ unsigned int keys[2];
    for (int i = threadIdx.x; i < STATS_BUCKETS; i += blockDim.x) buckets[i] = 0;
    if (threadIdx.x < 3) counts[threadIdx.x] = 0;
    if (threadIdx.x < 2) keys[threadIdx.x] = 0;
    __syncthreads();
    uint64_t itemsize = kind == KIND_F32 ? 4 : 2;
    uint64_t finite = 0, nan = 0, inf = 0;
    uint32_t max_key = 0, min_key_c = 0;
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    bool narrow = numel <= 0xffffffffull;
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < numel; e += stride) {
        uint32_t bits = f32_bits(data + element_offset(e, dims, ndim, itemsize, narrow), kind);
        uint32_t exp = (bits >> 23) & 0xff;
        if (exp == 0xff) {
            if (bits & 0x7fffff) nan++; else inf++;
            continue;
        }
        finite++;
        uint32_t key = order_key(bits);
        max_key = max(max_key, key);
        min_key_c = max(min_key_c, ~key);
        uint32_t mant = bits & 0x7fffff;
        if (exp != 0) mant |= 0x800000;
        uint32_t e1 = (exp == 0 ? 1 : exp) - 1;
        if (mant) atomicAdd(&buckets[e1 >> 2], (unsigned long long)mant << (e1 & 3));
    }
    atomicAdd(&counts[0], (unsigned long long)finite);
    atomicAdd(&counts[1], (unsigned long long)nan);
    atomicAdd(&counts[2], (unsigned long long)inf);
    atomicMax(&keys[0], max_key);
    atomicMax(&keys[1], min_key_c);
    __syncthreads();
    for (int i = threadIdx.x; i < STATS_BUCKETS; i += blockDim.x) {
        if (buckets[i]) atomicAdd(&out[i], buckets[i]);
    }
    if (threadIdx.x < 3 && counts[threadIdx.x]) atomicAdd(&out[64 + threadIdx.x], counts[threadIdx.x]);
    if (threadIdx.x == 0) {
        atomicMax(&out[67], (unsigned long long)keys[0]);
        atomicMax(&out[68], (unsigned long long)keys[1]);
    }
    if (last_block(results, slot, gridDim.x)) {
        for (int i = threadIdx.x; i < STATS_SLOTS; i += blockDim.x) {
            results.host[slot + i] = atomicExch(&out[i], 0ull);
        }
    }
}

// Samples of a float32, float16 or bfloat16 view: `count` elements at the
// logical positions tritontui_trace::samples names for `numel` (k-th of
// `count` chunks, the first numel % count one longer; within its chunk at
// fmix64(k + 1) modulo its length), each written as its float32 bits into
// its own host-mapped slot. One thread a sample.
__device__ __forceinline__ uint64_t fmix64(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 33);
}

extern "C" __global__ void ttsample(const uint8_t *data, uint64_t numel, int kind, int ndim,
                                    Dims dims, Results results, uint32_t slot, uint32_t count) {
    uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count) return;
    uint64_t len = numel / count, longer = numel % count;
    uint64_t start = k * len + (k < longer ? k : longer);
    uint64_t chunk = len + (k < longer ? 1 : 0);
    uint64_t position = start + fmix64(k + 1) % (chunk ? chunk : 1);
    uint64_t itemsize = kind == KIND_F32 ? 4 : 2;
    bool narrow = numel <= 0xffffffffull;
    uint32_t bits = f32_bits(data + element_offset(position, dims, ndim, itemsize, narrow), kind);
    results.host[slot + k] = (unsigned long long)bits;
}

// Row hashes (`rows`) of a view whose rows the table does not take (not
// contiguous rows of whole 16-byte chunks): `row` says how to read the
// first row, as a table's item (every row has its layout, each starting
// `row_stride` bytes after the one before), and each row is hashed as the
// tensor it would be alone, shared by `per_row` blocks that add into its
// slot as a table's hash does (`add_sum`); the host applies the final step
// with the row's length.
extern "C" __global__ void __launch_bounds__(256, 4)
    ttrows(const __grid_constant__ Item row, uint64_t row_stride, Results results,
           uint32_t slot, uint32_t per_row) {
    uint64_t r = blockIdx.x / per_row;
    uint64_t part = blockIdx.x % per_row;
    const uint8_t *data = row.data + r * row_stride;
    uint64_t sum;
    switch (row.layout) {
        case LAYOUT_CONTIGUOUS:
            sum = hash_contiguous(data, row.numel * row.itemsize, part, per_row);
            break;
        case LAYOUT_WORDS:
            sum = words_of(row, data, part, per_row);
            break;
        default:
            sum = hash_strided(data, row.numel, row.itemsize, row.ndim, row.dims, part, per_row);
    }
    add_sum(sum, results, slot + (uint32_t)r, per_row);
}
