/* app=hostile: descriptor cases (virtio 1.2 s2.7.5): bad addresses and
 * lengths, the wrong direction, and indirect tables the spec forbids
 * (s2.7.5.3.1). Each is a TX buffer of header and frame with one thing
 * changed. */
#include "apps/hostile.h"
#include "apps/hostile_build.h"

/* Header at descriptor 0, then a frame descriptor with these values. */
static int frame_as(struct hostile_env *e, uint64_t addr, uint32_t len, uint16_t flags)
{
    uint16_t head = 0;
    int r = hostile_desc(e, 0, (uintptr_t)e->buf, HOSTILE_HDR, VIRTQ_RAW_F_NEXT, 1);
    if (!r)
        r = hostile_desc(e, 1, addr, len, flags, 0);
    return r ? r : hostile_publish(e, &head, 1);
}

static uint64_t frame_addr(const struct hostile_env *e)
{
    return (uintptr_t)e->buf + HOSTILE_HDR;
}

int hostile_addr_ram(struct hostile_env *e)
{
    return frame_as(e, HOSTILE_ADDR_FAR, HOSTILE_FRAME, 0);
}

int hostile_addr_mmio(struct hostile_env *e)
{
    return frame_as(e, HOSTILE_ADDR_MMIO, HOSTILE_FRAME, 0);
}

int hostile_addr_wrap(struct hostile_env *e)
{
    return frame_as(e, HOSTILE_ADDR_WRAP, 0x2000u, 0);
}

int hostile_len_zero(struct hostile_env *e)
{
    return frame_as(e, frame_addr(e), 0, 0);
}

int hostile_len_max(struct hostile_env *e)
{
    return frame_as(e, frame_addr(e), UINT32_MAX, 0);
}

/* s2.7.4.2 / s5.1.6.2: a transmitq buffer the device is to write. */
int hostile_write_on_tx(struct hostile_env *e)
{
    return frame_as(e, frame_addr(e), HOSTILE_FRAME, VIRTQ_RAW_F_WRITE);
}

/* s5.1.6.3.1: a receiveq buffer the device may only read: descriptor
 * 0, made available by the driver's full ring and not used yet, turned
 * device-readable (the device meets it when a frame comes). */
int hostile_read_on_rx(struct hostile_env *e)
{
    return hostile_desc(e, 0, (uintptr_t)e->buf, HOSTILE_BUF, 0, 0);
}

/* A table of header and frame behind descriptor 0 (with NEXT: a
 * second frame descriptor follows it); nested: the frame entry is a table
 * of its own. Tables are written before the buffer is published. */
static int indirect_as(struct hostile_env *e, uint32_t len, uint16_t flags, int nested)
{
    uint16_t head = 0;
    uint64_t b = (uintptr_t)e->buf;
    struct virtq_raw_desc *inner = e->tab + 16;
    inner[0] = (struct virtq_raw_desc){b + HOSTILE_HDR, HOSTILE_FRAME, 0, 0};
    e->tab[0] = (struct virtq_raw_desc){b, HOSTILE_HDR, VIRTQ_RAW_F_NEXT, 1};
    e->tab[1] = nested ? (struct virtq_raw_desc){(uintptr_t)inner, 16u, VIRTQ_RAW_F_INDIRECT, 0}
                       : (struct virtq_raw_desc){b + HOSTILE_HDR, HOSTILE_FRAME, 0, 0};
    int r = hostile_desc(e, 0, (uintptr_t)e->tab, len, (uint16_t)(VIRTQ_RAW_F_INDIRECT | flags), 1);
    if (!r && (flags & VIRTQ_RAW_F_NEXT))
        r = hostile_desc(e, 1, b + HOSTILE_HDR, HOSTILE_FRAME, 0, 0);
    return r ? r : hostile_publish(e, &head, 1);
}

int hostile_ind_next(struct hostile_env *e)
{
    return indirect_as(e, 32u, VIRTQ_RAW_F_NEXT, 0);
}

/* s2.7.5.3.1: the table's second entry is itself a table. */
int hostile_ind_nested(struct hostile_env *e)
{
    return indirect_as(e, 32u, 0, 1);
}

int hostile_ind_len16(struct hostile_env *e)
{
    return indirect_as(e, 24u, 0, 0);
}

int hostile_ind_len0(struct hostile_env *e)
{
    return indirect_as(e, 0, 0, 0);
}
