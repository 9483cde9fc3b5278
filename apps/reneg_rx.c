#include "apps/reneg_rx.h"

#include "kernel/json.h"
#include "net/pkt.h"

enum reneg_frame reneg_rx_frame(struct reneg_rx *sets, unsigned n, unsigned cur, const uint8_t *f,
                                uint32_t len)
{
    struct pkt_info pi;
    uint32_t id;
    uint64_t seq;
    switch (pkt_parse(f, len, true, &pi)) {
    case PKT_UDP:
        if (!pkt_payload_hdr(f, &pi, &id, &seq))
            return RENEG_STACK;
        if (id >= n)
            break;
        sets[id].packets++;
        sets[id].bytes += len;
        seq_record(&sets[id].seq, seq);
        return RENEG_COUNTED;
    case PKT_BAD_LEN:
    case PKT_BAD_HDR:
    case PKT_BAD_CSUM:
        break;
    default:
        return RENEG_STACK;
    }
    sets[cur].malformed++;
    return RENEG_COUNTED;
}

void reneg_rx_json(struct json *j, const char *key, const struct reneg_rx *r)
{
    json_obj_begin(j, key);
    json_u64(j, "packets", r->packets);
    json_u64(j, "bytes", r->bytes);
    json_u64(j, "unique", r->seq.unique);
    json_u64(j, "lost", seq_lost(&r->seq));
    json_u64(j, "dup", r->seq.dup);
    json_u64(j, "reorder", r->seq.reorder);
    json_u64(j, "malformed", r->malformed);
    json_obj_end(j);
}
