/* apps/stream_spec.c: any text; what it accepts must hold the limits the
 * stream engine relies on (apps/stream_spec.h). */
#include <errno.h>

#include "apps/stream_spec.h"
#include "tests/fuzz/fuzz.h"

static void check_spec(const struct stream_spec *s)
{
    FUZZ_CHECK(s->ip == 4 || s->ip == 6);
    FUZZ_CHECK(s->nvlan <= STREAM_VLANS_MAX);
    for (unsigned i = 0; i < s->nvlan; i++)
        FUZZ_CHECK(s->vlan[i] >= 1 && s->vlan[i] <= 4094);
    FUZZ_CHECK(s->sizes.n >= 1 && s->sizes.n <= IMIX_MAX_SIZES);
    FUZZ_CHECK(s->proto < SPROTO_PROTOS);
    /* TCP's 20-byte header; TCP and ICMP hold the whole stamp, magic and all. */
    unsigned hdrs = 14u + 4u * s->nvlan + (s->ip == 6 ? 40u : 20u) +
                    (s->proto == SPROTO_TCP ? 20u : 8u) + (s->proto == SPROTO_UDP ? 18u : 24u);
    for (unsigned i = 0; i < s->sizes.n; i++)
        FUZZ_CHECK(s->sizes.size[i] >= hdrs && s->sizes.size[i] <= 9014);
    FUZZ_CHECK(!s->size_range || (s->sizes.n == 2 && s->sizes.size[0] <= s->sizes.size[1]));
    FUZZ_CHECK(s->mode < SMODE_MODES && s->flow_label < (1u << 20) && s->ttl >= 1);
    FUZZ_CHECK(s->gap_ns <= STREAM_GAP_NS_MAX && s->frames <= STREAM_FRAMES_MAX);
    FUZZ_CHECK(s->nvars <= STREAM_VARS_MAX);
    FUZZ_CHECK(s->proto != SPROTO_ICMP || (!s->sport && !s->dport));
    for (unsigned i = 0; i < s->nvars; i++) {
        const struct stream_var *v = &s->var[i];
        FUZZ_CHECK(s->proto != SPROTO_ICMP || (v->field != SF_SRC_PORT && v->field != SF_DST_PORT));
        FUZZ_CHECK(v->field < SF_FIELDS && v->op < SOP_OPS);
        FUZZ_CHECK(v->lo <= v->hi && v->hi - v->lo <= UINT32_MAX);
        FUZZ_CHECK(v->hi < (1ull << stream_field_bits((enum stream_field)v->field)));
        FUZZ_CHECK(v->step >= 1 && v->step <= (1ull << 32));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    static struct stream_spec specs[STREAMS_MAX];
    if (n > STREAM_TEXT_MAX + 16)
        return 0;
    char *s = fuzz_cstr(data, n);
    char why[160];
    unsigned cnt = 0;
    int rc = stream_spec_parse(s, specs, &cnt, why, sizeof(why));
    if (rc < 0) {
        FUZZ_CHECK(rc == -EINVAL && fuzz_terminated(why, sizeof(why)) && why[0]);
    } else {
        FUZZ_CHECK(cnt >= 1 && cnt <= STREAMS_MAX);
        for (unsigned i = 0; i < cnt; i++)
            check_spec(&specs[i]);
    }
    free(s);
    return 0;
}
