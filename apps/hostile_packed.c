/* app=hostile: the packed ring's cases (virtio 1.2 s2.8): wrap counters
 * and AVAIL/USED flags that lie, a buffer id twice, a list that never
 * ends, the packed indirect table's rules (s2.8.7, s2.8.19) and the event
 * suppression structures (s2.8.10). Each writes its layout from the
 * driver's next index (the device's position: the queue is idle) through
 * virtq_raw.h, the head's flags last; the app kicks. */
#include <errno.h>

#include "apps/hostile.h"
#include "apps/hostile_build.h"

#define EVENT_OFF_MAX  0x7fffu /* off_wrap's 15-bit offset (s2.8.14) */
#define EVENT_RESERVED 3u      /* RING_EVENT_FLAGS 0x3 (s2.8.10) */

/* One element of a buffer as a case lays it out (NEXT and the AVAIL/USED
 * bits are added as it is written). */
struct pel {
    uint64_t addr;
    uint32_t len;
    uint16_t flags;
};

/* The AVAIL/USED bits element k of a buffer gets at index i. */
typedef uint16_t pbits_fn(const struct hostile_env *e, unsigned k, uint16_t i);

/* Available on the driver's lap (s2.8.1). */
static uint16_t on_lap(const struct hostile_env *e, unsigned k, uint16_t i)
{
    (void)k;
    return virtq_raw_pbits(e->vq, i, false);
}

/* Available on the other lap: the wrong wrap counter. */
static uint16_t other_lap(const struct hostile_env *e, unsigned k, uint16_t i)
{
    (void)k;
    return virtq_raw_pbits(e->vq, (uint16_t)(i + virtq_size(e->vq)), false);
}

/* AVAIL == USED on the driver's lap: what the device writes when it has
 * used the descriptor. */
static uint16_t as_used(const struct hostile_env *e, unsigned k, uint16_t i)
{
    (void)k;
    return virtq_raw_pbits(e->vq, i, true);
}

/* The head on the driver's lap, the rest of the list on the other. */
static uint16_t tail_other(const struct hostile_env *e, unsigned k, uint16_t i)
{
    return k ? other_lap(e, k, i) : on_lap(e, k, i);
}

uint16_t hostile_pnext(const struct hostile_env *e)
{
    return virtq_raw_avail_idx(e->vq);
}

static uint16_t ppos(const struct hostile_env *e, uint16_t i)
{
    return (uint16_t)(i & (virtq_size(e->vq) - 1u));
}

/* The descriptor at free-running index i. */
static int pwrite(struct hostile_env *e, uint16_t i, uint64_t addr, uint32_t len, uint16_t id,
                  uint16_t flags)
{
    struct virtq_raw_pdesc d = {addr, len, id, flags};
    return virtq_raw_pdesc(e->vq, ppos(e, i), &d);
}

/* A list of n elements from index at: id in every one (s2.8.6: the
 * last's counts), NEXT on all but the last, the bits bits() says; the
 * head written last (s2.8.21.1). */
static int pchain(struct hostile_env *e, uint16_t at, const struct pel *el, unsigned n, uint16_t id,
                  pbits_fn *bits)
{
    int r = 0;
    for (unsigned k = n; k-- > 0 && !r;) {
        uint16_t i = (uint16_t)(at + k);
        uint16_t f = (uint16_t)(el[k].flags | (k + 1u < n ? VIRTQ_RAW_F_NEXT : 0) | bits(e, k, i));
        r = pwrite(e, i, el[k].addr, el[k].len, id, f);
    }
    return r;
}

/* Header and frame, the clean TX buffer, from index at with id its head's
 * position; counted in bufs when avail (it is available). */
static int ptx(struct hostile_env *e, uint16_t at, uint16_t id, pbits_fn *bits, bool avail)
{
    uint64_t b = (uintptr_t)e->buf;
    const struct pel el[2] = {{b, HOSTILE_HDR, 0}, {b + HOSTILE_HDR, HOSTILE_FRAME, 0}};
    int r = pchain(e, at, el, 2, id, bits);
    if (!r && avail)
        e->bufs++;
    return r;
}

int hostile_pvalid(struct hostile_env *e)
{
    uint16_t at = hostile_pnext(e);
    return ptx(e, at, ppos(e, at), on_lap, true);
}

/* s2.8.1: AVAIL and USED as the other lap makes a descriptor available:
 * not available now (s2.8.15: the device must not use it). */
int hostile_p_wrap(struct hostile_env *e)
{
    uint16_t at = hostile_pnext(e);
    return ptx(e, at, ppos(e, at), other_lap, false);
}

/* s2.8.1: AVAIL == USED, the used marking, written by the driver. */
int hostile_p_flags_used(struct hostile_env *e)
{
    uint16_t at = hostile_pnext(e);
    int r = ptx(e, at, ppos(e, at), as_used, false);
    if (!r)
        e->pmarked += 2; /* header and frame: not the device's */
    return r;
}

/* s2.8.6, s2.8.17: a head made available whose next element is not (its
 * bits are the other lap's). */
int hostile_p_chain_wrap(struct hostile_env *e)
{
    uint16_t at = hostile_pnext(e);
    return ptx(e, at, ppos(e, at), tail_other, true);
}

/* s2.8.21.1: two buffers with one id, the second written first so the
 * device finds both with the first. */
int hostile_p_id_twice(struct hostile_env *e)
{
    uint16_t at = hostile_pnext(e), id = ppos(e, at);
    int r = ptx(e, (uint16_t)(at + 2u), id, on_lap, true);
    return r ? r : ptx(e, at, id, on_lap, true);
}

/* s2.8.17: a list of every descriptor of the ring, NEXT on each, the last
 * too: it comes back to its own head. The header, the frame, then a byte
 * each. */
int hostile_p_chain_loop(struct hostile_env *e)
{
    uint16_t num = virtq_size(e->vq), at = hostile_pnext(e), id = ppos(e, at);
    if (num < 3u || HOSTILE_HDR + HOSTILE_FRAME + num > HOSTILE_BUF)
        return -EINVAL;
    uint64_t f = (uintptr_t)e->buf + HOSTILE_HDR;
    int r = 0;
    for (uint16_t k = num; k-- > 0 && !r;) {
        uint64_t a = k == 0 ? f - HOSTILE_HDR : k == 1 ? f : f + HOSTILE_FRAME + k - 2u;
        uint32_t len = k == 0 ? HOSTILE_HDR : k == 1 ? HOSTILE_FRAME : 1u;
        uint16_t i = (uint16_t)(at + k);
        r = pwrite(e, i, a, len, id, (uint16_t)(VIRTQ_RAW_F_NEXT | on_lap(e, k, i)));
    }
    if (!r)
        e->bufs++;
    return r;
}

/* A packed table (s2.8.7: side by side, len/16 of them) of header and
 * frame behind the descriptor at the next index, len bytes, with flags
 * added to it (NEXT: a frame descriptor follows it in the ring, available
 * too, so a device that ignores the NEXT takes it as a buffer of its own:
 * two frames may reach the wire); hflags: the header entry's flags;
 * nested: the frame entry a table of its own. */
static int pindirect(struct hostile_env *e, uint32_t len, uint16_t flags, uint16_t hflags,
                     bool nested)
{
    uint16_t at = hostile_pnext(e), id = ppos(e, at);
    uint64_t b = (uintptr_t)e->buf;
    struct virtq_raw_pdesc *inner = e->ptab + 16;
    inner[0] = (struct virtq_raw_pdesc){b + HOSTILE_HDR, HOSTILE_FRAME, 0, 0};
    e->ptab[0] = (struct virtq_raw_pdesc){b, HOSTILE_HDR, 0, hflags};
    e->ptab[1] = nested ? (struct virtq_raw_pdesc){(uintptr_t)inner, 16u, 0, VIRTQ_RAW_F_INDIRECT}
                        : (struct virtq_raw_pdesc){b + HOSTILE_HDR, HOSTILE_FRAME, 0, 0};
    int r = 0;
    if (flags & VIRTQ_RAW_F_NEXT)
        r = pwrite(e, (uint16_t)(at + 1u), b + HOSTILE_HDR, HOSTILE_FRAME, id,
                   on_lap(e, 1, (uint16_t)(at + 1u)));
    if (!r)
        r = pwrite(e, at, (uintptr_t)e->ptab, len, id,
                   (uint16_t)(VIRTQ_RAW_F_INDIRECT | flags | on_lap(e, 0, at)));
    if (!r)
        e->bufs += (flags & VIRTQ_RAW_F_NEXT) ? 2u : 1u;
    return r;
}

/* s2.8.19: INDIRECT and NEXT on one descriptor. */
int hostile_p_ind_next(struct hostile_env *e)
{
    return pindirect(e, 32u, VIRTQ_RAW_F_NEXT, 0, false);
}

/* s2.8.19: an indirect descriptor after a direct one in a NEXT list (the
 * split ring allows it, s2.7.5.3.2; the packed ring does not). */
int hostile_p_ind_chain(struct hostile_env *e)
{
    uint16_t at = hostile_pnext(e), id = ppos(e, at), i1 = (uint16_t)(at + 1u);
    uint64_t b = (uintptr_t)e->buf;
    e->ptab[0] = (struct virtq_raw_pdesc){b + HOSTILE_HDR, HOSTILE_FRAME, 0, 0};
    int r = pwrite(e, i1, (uintptr_t)e->ptab, 16u, id,
                   (uint16_t)(VIRTQ_RAW_F_INDIRECT | on_lap(e, 1, i1)));
    if (!r)
        r = pwrite(e, at, b, HOSTILE_HDR, id, (uint16_t)(VIRTQ_RAW_F_NEXT | on_lap(e, 0, at)));
    if (!r)
        e->bufs++;
    return r;
}

/* s2.8.19: a table entry that is itself a table. */
int hostile_p_ind_nested(struct hostile_env *e)
{
    return pindirect(e, 32u, 0, 0, true);
}

/* s2.8.19: NEXT inside a packed table, where only WRITE is valid (the
 * split ring's tables link by it). */
int hostile_p_ind_flags(struct hostile_env *e)
{
    return pindirect(e, 32u, 0, VIRTQ_RAW_F_NEXT, false);
}

/* s2.8.7: a table of 24 bytes, of 0. */
int hostile_p_ind_len16(struct hostile_env *e)
{
    return pindirect(e, 24u, 0, 0, false);
}

int hostile_p_ind_len0(struct hostile_env *e)
{
    return pindirect(e, 0, 0, 0, false);
}

/* s2.8.10: the driver's event flags the reserved 0x3, then a valid buffer. */
int hostile_p_event_flags(struct hostile_env *e)
{
    int r = virtq_raw_pevent(e->vq, false, 0, EVENT_RESERVED);
    return r ? r : hostile_pvalid(e);
}

/* s2.8.10, s2.8.14: a descriptor event at an offset past the ring (the
 * 15-bit field's largest, on the driver's lap), then a valid buffer. A
 * ring of 2^15 has no offset past it. */
int hostile_p_event_off(struct hostile_env *e)
{
    if (virtq_size(e->vq) > EVENT_OFF_MAX)
        return -ERANGE;
    uint16_t wrap = (virtq_raw_pbits(e->vq, hostile_pnext(e), false) & VIRTQ_RAW_PF_AVAIL) ? 1 : 0;
    int r =
        virtq_raw_pevent(e->vq, false, (uint16_t)(EVENT_OFF_MAX | wrap << 15), VIRTQ_RAW_EV_DESC);
    return r ? r : hostile_pvalid(e);
}

/* s2.8.10: the driver writes the device's event suppression structure
 * (all ones), then a valid buffer. */
int hostile_p_dev_event(struct hostile_env *e)
{
    int r = virtq_raw_pevent(e->vq, true, 0xffffu, 0xffffu);
    return r ? r : hostile_pvalid(e);
}
