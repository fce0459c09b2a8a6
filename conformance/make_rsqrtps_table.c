/* The CPU's `rsqrtps` estimates that MKL's float32 square root starts from
 * (converters/src/hf/torch_math/sqrt.rs): for x = (1 + i/4096)·2^p, p in {0, 1}, i in
 * 0..4096, the estimate's bits (little-endian u32) at p·4096 + i, written to
 * rsqrtps_zen.bin. It first checks on 2·10^8 random positive normal inputs that the
 * estimate depends on the exponent's parity and the 12 leading mantissa bits only and
 * scales exactly by powers of 4 (exit 1 if not). Run it on the machine the reference
 * outputs are made on (an AMD EPYC for the committed table):
 *
 *     cc -O2 -msse2 -o make_rsqrtps_table conformance/make_rsqrtps_table.c
 *     ./make_rsqrtps_table converters/src/hf/torch_math/rsqrtps_zen.bin
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint32_t estimate(uint32_t bits) {
    float x, o[4];
    memcpy(&x, &bits, 4);
    _mm_storeu_ps(o, _mm_rsqrt_ps(_mm_set1_ps(x)));
    uint32_t r;
    memcpy(&r, &o[0], 4);
    return r;
}

int main(int argc, char **argv) {
    static uint32_t table[8192];
    for (uint32_t p = 0; p < 2; p++)
        for (uint32_t i = 0; i < 4096; i++)
            table[p * 4096 + i] = estimate(((127u + p) << 23) | (i << 11));
    uint64_t seed = 88172645463325252ull;
    long bad = 0;
    for (long n = 0; n < 200000000; n++) {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        uint32_t b = (uint32_t)(seed % 0x7f000000u) + 0x00800000u;
        int e = (int)(b >> 23) - 127, p = e & 1, k = (e - p) / 2;
        uint32_t t = table[p * 4096 + ((b >> 11) & 0xfff)];
        uint32_t want = (t & 0x807fffffu) | ((uint32_t)((int)(t >> 23) - k) << 23);
        if (estimate(b) != want) bad++;
    }
    if (bad) {
        fprintf(stderr, "%ld inputs do not follow the table\n", bad);
        return 1;
    }
    FILE *f = fopen(argc > 1 ? argv[1] : "rsqrtps_zen.bin", "wb");
    if (!f || fwrite(table, 4, 8192, f) != 8192 || fclose(f)) return 1;
    return 0;
}
