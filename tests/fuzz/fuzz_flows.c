/* apps/flows.c: flows= and its expansion; every flow inside the ranges
 * given, each combination once, never more than FLOWS_MAX. */
#include <errno.h>

#include "apps/flows.h"
#include "tests/fuzz/fuzz.h"

static uint64_t n_or_1(uint32_t n)
{
    return n ? n : 1;
}

/* The most times one field (sip, dip, sport, dport, seq|random) starts an
 * item of s. */
static unsigned most_repeats(const char *s)
{
    static const char *const pre[] = {"sip:", "dip:", "sport:", "dport:", "seq", "random"};
    unsigned cnt[5] = {0}, most = 0;
    for (const char *p = s; *p; p += *p == ',') {
        for (unsigned i = 0; i < 6; i++) {
            unsigned f = i < 4 ? i : 4; /* seq and random: one field */
            if (strncmp(p, pre[i], strlen(pre[i])) == 0 && ++cnt[f] > most)
                most = cnt[f];
        }
        p += strcspn(p, ",");
    }
    return most;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    if (n > 512)
        return 0;
    char *s = fuzz_cstr(data, n);
    char why[300];
    struct flows_spec fs;
    int rc = flows_parse(s, &fs, why, sizeof(why));
    if (rc < 0) {
        FUZZ_CHECK(rc == -EINVAL && fuzz_terminated(why, sizeof(why)) && why[0]);
        free(s);
        return 0;
    }
    FUZZ_CHECK(most_repeats(s) <= 1); /* each field at most once (issue 31 F7) */
    uint64_t total = n_or_1(fs.sip_n) * n_or_1(fs.dip_n) * n_or_1(fs.sport_n) * n_or_1(fs.dport_n);
    FUZZ_CHECK(total >= 1 && total <= FLOWS_MAX);
    FUZZ_CHECK(!fs.sip_n || (uint64_t)fs.sip_lo + fs.sip_n - 1 <= UINT32_MAX);
    FUZZ_CHECK(!fs.dip_n || (uint64_t)fs.dip_lo + fs.dip_n - 1 <= UINT32_MAX);
    /* Ports 1..65535, as src_port= and dst_port= (issue 31 F16). */
    FUZZ_CHECK(!fs.sport_n || (fs.sport_lo >= 1 && fs.sport_lo + fs.sport_n - 1 <= 65535));
    FUZZ_CHECK(!fs.dport_n || (fs.dport_lo >= 1 && fs.dport_lo + fs.dport_n - 1 <= 65535));
    static struct pkt_flow out[FLOWS_MAX];
    struct pkt_flow base = {.saddr = 0x0a000002, .daddr = 0x0a000001, .sport = 9, .dport = 7};
    unsigned k = flows_expand(&fs, &base, out);
    FUZZ_CHECK(k == total);
    for (unsigned i = 0; i < k; i++) {
        const struct pkt_flow *f = &out[i];
        FUZZ_CHECK(f->stream == i);
        FUZZ_CHECK(fs.sip_n ? f->saddr - fs.sip_lo < fs.sip_n : f->saddr == base.saddr);
        FUZZ_CHECK(fs.dip_n ? f->daddr - fs.dip_lo < fs.dip_n : f->daddr == base.daddr);
        FUZZ_CHECK(fs.sport_n ? (uint32_t)f->sport - fs.sport_lo < fs.sport_n
                              : f->sport == base.sport);
        FUZZ_CHECK(fs.dport_n ? (uint32_t)f->dport - fs.dport_lo < fs.dport_n
                              : f->dport == base.dport);
        /* Each combination once: neighbours differ. */
        if (i)
            FUZZ_CHECK(memcmp(&out[i - 1], f, offsetof(struct pkt_flow, stream)) != 0 ||
                       total == 1);
    }
    free(s);
    return 0;
}
