/* tools/rrserver/rrs_req.c: the request parsing of both loops, against a
 * model. The input picks req and resp, then TCP reads of any size (as
 * recv returns them, up to the server's 64 KiB buffer), answers sent, and
 * UDP datagrams of any length and bytes. A stream owes one answer per req
 * bytes, whatever the reads' boundaries; a UDP answer starts with the
 * request's first rrs_id_len bytes, zeros past the request's end. */
#include "tests/fuzz/fuzz.h"
#include "tools/rrserver/rrs.h"

struct model {
    uint64_t bytes, sent, udp_bytes, shorts;
};

static uint32_t take16(const uint8_t **d, size_t *n)
{
    uint32_t v = 0;
    for (int i = 0; i < 2 && *n; i++, (*d)++, (*n)--)
        v = v << 8 | **d;
    return v;
}

static void udp(const struct rrs_opts *o, const uint8_t **d, size_t *n, struct rrs_stats *st,
                struct model *m)
{
    size_t len = take16(d, n) % 1024;
    if (len > *n)
        len = *n;
    uint8_t *in = malloc(len ? len : 1), *out = malloc(RRS_ID_LEN);
    const uint32_t idl = rrs_id_len(o);
    if (!in || !out)
        abort();
    memcpy(in, *d, len);
    memset(out, 0xa5, RRS_ID_LEN);
    rrs_udp_answer(o, in, len, out, st);
    for (uint32_t i = 0; i < idl; i++)
        FUZZ_CHECK(out[i] == (i < len ? in[i] : 0));
    for (uint32_t i = idl; i < RRS_ID_LEN; i++)
        FUZZ_CHECK(out[i] == 0xa5); /* past the id: the caller's */
    m->udp_bytes += len;
    m->shorts += len != o->req;
    *d += len;
    *n -= len;
    free(in);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    struct rrs_opts o = {RRS_TCP, "0.0.0.0", 1, 1, 1, NULL};
    o.req = take16(&d, &n) % RRS_MSG_MAX + 1;
    o.resp = take16(&d, &n) % RRS_MSG_MAX + 1;
    struct rrs_stats st = {0};
    struct rrs_stream s = {0, 0};
    struct model m = {0, 0, 0, 0};
    while (n) {
        uint8_t op = *d++;
        n--;
        if (op < 0x80) {
            uint32_t r = (take16(&d, &n) << 1 | (op & 1)) % 65537; /* 0..65536 */
            rrs_stream_add(&o, &s, r, &st);
            m.bytes += r;
        } else if (op < 0xc0 && s.owed) {
            uint64_t k = 1 + (op & 0x3f) % s.owed; /* answers sent, as rrs_flush does */
            s.owed -= k;
            m.sent += k;
        } else {
            udp(&o, &d, &n, &st, &m);
        }
        FUZZ_CHECK(s.got == m.bytes % o.req && s.got < o.req);
        FUZZ_CHECK(m.sent + s.owed == m.bytes / o.req);
        FUZZ_CHECK(st.req_bytes == m.bytes + m.udp_bytes && st.short_msgs == m.shorts);
    }
    return 0;
}
