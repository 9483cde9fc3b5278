/* A device's reading of a split queue, naming each broken driver rule
 * (sim_check.h). Walks are bounded by the queue size and table lengths,
 * so a looping or lying layout ends. */
#include "sim_check.h"

#include <string.h>

#include "apps/hostile.h"
#include "drivers/virtio/vnet_hdr.h"

#define BIT(v)   (1u << (v))
#define MMIO_LO  0xfec00000ull /* I/O APIC .. 4 GiB: no RAM here */
#define MMIO_HI  0x100000000ull
#define ETH_HLEN 14u
#define IP_MAX   65535u

/* A buffer's readable bytes as the device gathers them. */
struct gather {
    uint32_t bad;   /* violations found in its descriptors */
    uint64_t total; /* readable bytes */
    const struct virtio_net_hdr *hdr;
};

static bool in_mem(const struct simchk_env *env, uint64_t a, uint32_t len)
{
    for (unsigned i = 0; i < env->nmem; i++)
        if (a >= env->mem[i].lo && a + len <= env->mem[i].hi)
            return true;
    return false;
}

/* One element (not an indirect one): its address, length, direction. */
static void element(const struct simchk_env *env, struct gather *g, uint64_t a, uint32_t len,
                    uint16_t flags)
{
    bool w = flags & VRING_DESC_F_WRITE;
    if (!len)
        g->bad |= BIT(HV_LEN_ZERO);
    else if (len == UINT32_MAX)
        g->bad |= BIT(HV_LEN_MAX);
    else if (a + len < a)
        g->bad |= BIT(HV_ADDR_WRAP);
    else if (a + len > MMIO_LO && a < MMIO_HI)
        g->bad |= BIT(HV_ADDR_MMIO);
    else if (!in_mem(env, a, len))
        g->bad |= BIT(HV_ADDR_RAM);
    if (env->rx && !w)
        g->bad |= BIT(HV_READ_ON_RX);
    if (!env->rx && w)
        g->bad |= BIT(HV_WRITE_ON_TX);
    if (g->bad || w)
        return;
    if (!g->total && len >= sizeof(*g->hdr))
        g->hdr = (const void *)(uintptr_t)a;
    g->total += len;
}

/* s2.7.5.3: an indirect table of len bytes at a. */
static void table(const struct sim_queue *sq, const struct simchk_env *env, struct gather *g,
                  uint64_t a, uint32_t len)
{
    if (!len || len % 16u) {
        g->bad |= BIT(len ? HV_IND_LEN16 : HV_IND_LEN0);
        return;
    }
    uint32_t n = len / 16u;
    if (n > sq->num)
        g->bad |= BIT(HV_CHAIN_LONG);
    if (!in_mem(env, a, len)) {
        g->bad |= BIT(HV_ADDR_RAM);
        return;
    }
    const struct vring_desc *t = (const void *)(uintptr_t)a;
    for (uint32_t i = 0, k = 0; k < n; k++) {
        if (t[i].flags & VRING_DESC_F_INDIRECT) {
            g->bad |= BIT(HV_IND_NESTED);
            return;
        }
        element(env, g, t[i].addr, t[i].len, t[i].flags);
        if (!(t[i].flags & VRING_DESC_F_NEXT))
            return;
        i = t[i].next;
        if (i >= n) {
            g->bad |= BIT(HV_HEAD_RANGE);
            return;
        }
    }
    g->bad |= BIT(HV_CHAIN_LOOP); /* n links and still NEXT */
}

/* The chain from head: its elements into g. */
static void chain(const struct sim_queue *sq, const struct simchk_env *env, struct gather *g,
                  uint16_t head)
{
    uint8_t seen[VIRTQ_MAX / 8] = {0};
    for (uint16_t i = head;;) {
        if (seen[i / 8] & (1u << (i % 8))) {
            g->bad |= BIT(HV_CHAIN_LOOP);
            return;
        }
        seen[i / 8] |= (uint8_t)(1u << (i % 8));
        const struct vring_desc *e = &sq->desc[i];
        if (e->flags & VRING_DESC_F_INDIRECT) {
            if (e->flags & VRING_DESC_F_NEXT)
                g->bad |= BIT(HV_IND_NEXT);
            table(sq, env, g, e->addr, e->len);
            return;
        }
        element(env, g, e->addr, e->len, e->flags);
        if (!(e->flags & VRING_DESC_F_NEXT))
            return;
        i = e->next;
        if (i >= sq->num) {
            g->bad |= BIT(HV_HEAD_RANGE);
            return;
        }
    }
}

/* s5.1.6.2: a well-formed TX buffer's header against its frame. */
static uint32_t header(const struct simchk_env *env, const struct gather *g)
{
    if (!g->hdr)
        return 0;
    const struct virtio_net_hdr *h = g->hdr;
    uint64_t len = g->total - sizeof(*h);
    uint32_t bad = 0;
    uint8_t gso = h->gso_type & (uint8_t)~VIRTIO_NET_HDR_GSO_ECN;
    if (gso != VIRTIO_NET_HDR_GSO_NONE) {
        if (h->hdr_len > len)
            bad |= BIT(HV_HDR_GSO_HDRLEN);
        if (!h->gso_size)
            bad |= BIT(HV_HDR_GSO_SIZE0);
        if (len > ETH_HLEN + IP_MAX)
            bad |= BIT(HV_FRAME_GSO_BIG);
    } else if (len > env->mtu + ETH_HLEN) {
        bad |= BIT(HV_FRAME_MTU);
    }
    if ((h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) &&
        (uint32_t)h->csum_start + h->csum_offset + 2u > len)
        bad |= BIT(HV_HDR_CSUM_PAST);
    if (h->num_buffers)
        bad |= BIT(HV_HDR_NUMBUF_TX);
    if (len < ETH_HLEN)
        bad |= BIT(HV_FRAME_RUNT);
    return bad;
}

/* The event fields: used_event more than the queue size behind the used
 * index (so never reached in 16 bits' worth), avail_event written. */
static uint32_t events(const struct sim_queue *sq, const struct simchk_env *env)
{
    uint32_t bad = 0;
    uint16_t ue = sq->avail->ring[sq->num];
    if ((uint16_t)(ue - sq->used_idx) >= 0x8000u && (uint16_t)(sq->used_idx - ue) > sq->num)
        bad |= BIT(HV_EVENT_FAR);
    if (*(const uint16_t *)&sq->used->ring[sq->num] != env->avail_event0)
        bad |= BIT(HV_DEV_AREA);
    return bad;
}

uint32_t simchk_split(const struct sim_queue *sq, const struct simchk_env *env)
{
    uint32_t bad = events(sq, env);
    uint16_t d = (uint16_t)(sq->avail->idx - sq->last_avail);
    if (d > sq->num)
        return bad | BIT(d >= 0x8000u ? HV_AVAIL_BACK : HV_AVAIL_AHEAD);
    uint8_t heads[VIRTQ_MAX / 8] = {0};
    for (uint16_t k = 0; k < d; k++) {
        uint16_t h = sq->avail->ring[(uint16_t)(sq->last_avail + k) & (sq->num - 1)];
        if (h >= sq->num) {
            bad |= BIT(HV_HEAD_RANGE);
            continue;
        }
        if (heads[h / 8] & (1u << (h % 8))) {
            bad |= BIT(HV_HEAD_TWICE);
            continue;
        }
        heads[h / 8] |= (uint8_t)(1u << (h % 8));
        struct gather g = {0};
        chain(sq, env, &g, h);
        bad |= g.bad;
        if (!g.bad && !env->rx)
            bad |= header(env, &g);
    }
    return bad;
}
