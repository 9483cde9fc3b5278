/* app=reneg's uso= datagrams (see reneg_uso.h). */
#include "apps/reneg_uso.h"

#include "net/pkt.h"

uint32_t reneg_uso_payload(uint16_t uso)
{
    if (uso < PL_LEN)
        return 0;
    uint32_t len = RENEG_USO_PAYLOAD, last = len % uso;
    if (last != 0 && last < PL_LEN)
        len -= last; /* too short for a header: left out */
    return len > uso ? len : 0;
}

uint32_t reneg_uso_stamp(uint8_t *p, uint32_t len, uint16_t uso, uint32_t stream, uint64_t seq,
                         uint64_t tsc)
{
    uint32_t n = 0;
    for (uint32_t off = 0; off < len; off += uso, n++) {
        uint8_t *h = p + off;
        wrle64(h + PL_OFF_SEQ, seq + n);
        wrle64(h + PL_OFF_TSC, tsc);
        wrle32(h + PL_OFF_STREAM, stream);
        wrle32(h + PL_OFF_MAGIC, PL_MAGIC);
    }
    return n;
}
