/* Request parsing, apart from the sockets: what a stream's bytes owe
 * (TCP) and what a datagram's answer carries (UDP). Pure. */
#include <string.h>

#include "tools/rrserver/rrs.h"

void rrs_stream_add(const struct rrs_opts *o, struct rrs_stream *s, uint32_t n,
                    struct rrs_stats *st)
{
    st->req_bytes += n;
    /* 64-bit: got + n cannot wrap; owed grows by at most n a call. */
    uint64_t got = (uint64_t)s->got + n;
    s->owed += got / o->req;
    s->got = (uint32_t)(got % o->req);
}

void rrs_udp_answer(const struct rrs_opts *o, const uint8_t *in, size_t n, uint8_t *out,
                    struct rrs_stats *st)
{
    const uint32_t idl = rrs_id_len(o);
    st->req_bytes += n;
    if (n != o->req)
        st->short_msgs++;
    /* the transaction number, as far as the request carried it */
    memset(out, 0, idl);
    memcpy(out, in, n < idl ? n : idl);
}
