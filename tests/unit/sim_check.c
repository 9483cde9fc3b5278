/* A device's reading of a split or packed queue, naming each broken
 * driver rule (sim_check.h). Walks are bounded by the queue size and
 * table lengths, so a looping or lying layout ends. */
#include "sim_check.h"

#include <string.h>

#include "apps/hostile.h"
#include "drivers/virtio/vnet_hdr.h"

#define BIT(v)   (1ull << (v))
#define MMIO_LO  0xfec00000ull /* I/O APIC .. 4 GiB: no RAM here */
#define MMIO_HI  0x100000000ull
#define ETH_HLEN 14u
#define IP_MAX   65535u

/* A buffer's readable bytes as the device gathers them. */
struct gather {
    uint64_t bad;   /* violations found in its descriptors */
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

/* Marks k in a bitmap; true when it was marked already. */
static bool seen_before(uint8_t *bits, uint32_t k)
{
    bool was = bits[k / 8] & (1u << (k % 8));
    bits[k / 8] |= (uint8_t)(1u << (k % 8));
    return was;
}

/* s2.7.5.3, s2.8.19: an indirect table of len bytes at a, either ring's
 * entries 16 bytes: how many it holds, 0 when it cannot be read. */
static uint32_t table_len(const struct sim_queue *sq, const struct simchk_env *env,
                          struct gather *g, uint64_t a, uint32_t len)
{
    if (!len || len % 16u) {
        g->bad |= BIT(len ? HV_IND_LEN16 : HV_IND_LEN0);
        return 0;
    }
    uint32_t n = len / 16u;
    if (n > sq->num)
        g->bad |= BIT(HV_CHAIN_LONG);
    if (!in_mem(env, a, len)) {
        g->bad |= BIT(HV_ADDR_RAM);
        return 0;
    }
    return n;
}

/* s2.7.5.3: a split ring's indirect table, its entries linked by next. */
static void table(const struct sim_queue *sq, const struct simchk_env *env, struct gather *g,
                  uint64_t a, uint32_t len)
{
    uint32_t n = table_len(sq, env, g, a, len);
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
    if (n)
        g->bad |= BIT(HV_CHAIN_LOOP); /* n links and still NEXT */
}

/* The chain from head: its elements into g. */
static void chain(const struct sim_queue *sq, const struct simchk_env *env, struct gather *g,
                  uint16_t head)
{
    uint8_t seen[VIRTQ_MAX / 8] = {0};
    for (uint16_t i = head;;) {
        if (seen_before(seen, i)) {
            g->bad |= BIT(HV_CHAIN_LOOP);
            return;
        }
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
static uint64_t header(const struct simchk_env *env, const struct gather *g)
{
    if (!g->hdr)
        return 0;
    const struct virtio_net_hdr *h = g->hdr;
    uint64_t len = g->total - sizeof(*h);
    uint64_t bad = 0;
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
static uint64_t events(const struct sim_queue *sq, const struct simchk_env *env)
{
    uint64_t bad = 0;
    uint16_t ue = sq->avail->ring[sq->num];
    if ((uint16_t)(ue - sq->used_idx) >= 0x8000u && (uint16_t)(sq->used_idx - ue) > sq->num)
        bad |= BIT(HV_EVENT_FAR);
    if (*(const uint16_t *)&sq->used->ring[sq->num] != env->avail_event0)
        bad |= BIT(HV_DEV_AREA);
    return bad;
}

uint64_t simchk_split(const struct sim_queue *sq, const struct simchk_env *env)
{
    uint64_t bad = events(sq, env);
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
        if (seen_before(heads, h)) {
            bad |= BIT(HV_HEAD_TWICE);
            continue;
        }
        struct gather g = {0};
        chain(sq, env, &g, h);
        bad |= g.bad;
        if (!g.bad && !env->rx)
            bad |= header(env, &g);
    }
    return bad;
}

/* s5.1.6.5.1-7: the classes and commands a device has, and the bytes of
 * command-specific data each carries at least. */
struct ctrl_rule {
    uint8_t cls, cmds; /* commands 0..cmds-1 */
    uint8_t min[3];    /* per command, the first three (the rest: min[0]) */
};

static const struct ctrl_rule ctrl_rules[] = {
    {0, 6, {1, 1, 1}},   /* RX: PROMISC, ALLMULTI, ALLUNI, NOMULTI, NOUNI, NOBCAST: u8 */
    {1, 2, {8, 6, 0}},   /* MAC: TABLE_SET (two le32 counts), ADDR_SET */
    {2, 2, {2, 2, 0}},   /* VLAN: ADD, DEL: le16 */
    {3, 1, {0, 0, 0}},   /* ANNOUNCE: ACK */
    {4, 3, {2, 11, 13}}, /* MQ: VQ_PAIRS_SET, RSS_CONFIG (no table, no key), HASH_CONFIG */
    {5, 1, {8, 0, 0}},   /* GUEST_OFFLOADS: SET, le64 */
};

#define CTRL_CMD_MAX 1024u

static uint16_t le16_at(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

/* s5.1.6.5.7.1: struct virtio_net_rss_config's table and unclassified
 * queue against the device's receive queues. */
static uint32_t ctrl_rss(const uint8_t *d, uint32_t len, uint16_t max_pairs)
{
    uint16_t mask = le16_at(d + 4);
    uint32_t n = (uint32_t)mask + 1u;
    if (n & mask)
        return BIT(HC_RSS_LEN);
    if (len < 11u + 2u * n)
        return BIT(HC_SHORT);
    uint32_t bad = le16_at(d + 6) >= max_pairs ? BIT(HC_RSS_QUEUE) : 0;
    for (uint32_t i = 0; i < n; i++)
        if (le16_at(d + 8 + 2 * i) >= max_pairs)
            bad |= BIT(HC_RSS_QUEUE);
    return bad;
}

/* The command's data against its class and command. */
static uint32_t ctrl_data(const uint8_t *cmd, uint32_t len, uint16_t max_pairs)
{
    const struct ctrl_rule *r = NULL;
    for (unsigned i = 0; i < sizeof(ctrl_rules) / sizeof(ctrl_rules[0]); i++)
        if (ctrl_rules[i].cls == cmd[0])
            r = &ctrl_rules[i];
    if (!r)
        return BIT(HC_CLASS);
    if (cmd[1] >= r->cmds)
        return BIT(HC_CMD);
    const uint8_t *d = cmd + 2;
    uint32_t dlen = len - 2u;
    if (dlen < r->min[cmd[1] < 3 ? cmd[1] : 0])
        return BIT(HC_SHORT);
    if (cmd[0] == 4 && cmd[1] == 0) {
        uint16_t n = le16_at(d);
        return n < 1u || n > max_pairs ? BIT(HC_MQ_PAIRS) : 0;
    }
    return cmd[0] == 4 && cmd[1] == 1 ? ctrl_rss(d, dlen, max_pairs) : 0;
}

uint32_t simchk_ctrl(const struct sim_queue *sq, uint16_t max_pairs)
{
    struct sim_chain c;
    if (simq_peek(sq, 0, &c))
        return BIT(HC_NO_ACK); /* nothing readable as a chain: no ack to write */
    uint32_t bad = 0;
    unsigned nr = c.nr;
    if (c.n == c.nr) {
        /* s5.1.6.5: the ack is device-writable; one readable byte last is
         * an ack the device may not write */
        bool ro = nr >= 2 && c.len[nr - 1] == 1;
        bad |= BIT(ro ? HC_ACK_RO : HC_NO_ACK);
        nr -= ro;
    } else if (c.n != c.nr + 1 || c.len[c.nr] < 1) {
        bad |= BIT(HC_NO_ACK);
    }
    uint8_t cmd[CTRL_CMD_MAX];
    uint32_t len = 0;
    for (unsigned i = 0; i < nr; i++) {
        if (c.len[i] > CTRL_CMD_MAX - len)
            return bad | BIT(HC_SHORT);
        memcpy(cmd + len, (const void *)(uintptr_t)c.addr[i], c.len[i]);
        len += c.len[i];
    }
    if (len < 2)
        return bad | BIT(HC_SHORT);
    return bad | ctrl_data(cmd, len, max_pairs);
}

uint32_t simchk_notify(const struct sim_queue *sq, uint32_t val)
{
    uint16_t d = (uint16_t)((uint16_t)(val >> 16) - sq->avail->idx);
    if (!d)
        return 0;
    return BIT(d < 0x8000u ? HC_NOTIF_AHEAD : HC_NOTIF_BEHIND);
}

uint32_t simchk_notify_off(const struct sim_dev *s)
{
    for (unsigned q = 0; q < SIM_QMAX; q++)
        if (s->q[q].notify_off)
            return BIT(HC_NOTIF_OFF);
    return 0;
}

/* The packed ring (s2.8) */

#define PF_BOTH (VRING_PACKED_DESC_F_AVAIL | VRING_PACKED_DESC_F_USED)
#define EV_OFF  0x7fffu

/* The AVAIL/USED bits of index i made available, and used (s2.8.1). */
static uint16_t pavail(const struct sim_queue *sq, uint16_t i)
{
    return (i & sq->num) ? VRING_PACKED_DESC_F_USED : VRING_PACKED_DESC_F_AVAIL;
}

static uint16_t pused(const struct sim_queue *sq, uint16_t i)
{
    return (i & sq->num) ? 0 : PF_BOTH;
}

/* s2.8.7, s2.8.19: a packed table of len bytes at a, its entries side by
 * side, WRITE their only flag. */
static void ptable(const struct sim_queue *sq, const struct simchk_env *env, struct gather *g,
                   uint64_t a, uint32_t len)
{
    uint32_t n = table_len(sq, env, g, a, len);
    const struct vring_packed_desc *t = (const void *)(uintptr_t)a;
    for (uint32_t k = 0; k < n; k++) {
        if (t[k].flags & VRING_DESC_F_INDIRECT) {
            g->bad |= BIT(HV_IND_NESTED);
            return;
        }
        if (t[k].flags & ~VRING_DESC_F_WRITE)
            g->bad |= BIT(HV_P_TAB_FLAGS);
        element(env, g, t[k].addr, t[k].len, t[k].flags);
    }
}

/* The list whose head is at index i (available): its elements into g, its
 * id (the last descriptor's, s2.8.6). Returns the descriptors it takes:
 * the NEXT run, at most the queue size. */
static uint16_t plist(const struct sim_queue *sq, const struct simchk_env *env, struct gather *g,
                      uint16_t i, uint16_t *id)
{
    for (uint16_t k = 0;; k++) {
        const struct vring_packed_desc *d = &sq->pdesc[(uint16_t)(i + k) & (sq->num - 1)];
        if (k && (d->flags & PF_BOTH) != pavail(sq, (uint16_t)(i + k))) {
            g->bad |= BIT(HV_P_CHAIN_WRAP); /* the list goes on, its element not available */
            return k;
        }
        *id = d->id;
        if (d->flags & VRING_DESC_F_INDIRECT) {
            if (d->flags & VRING_DESC_F_NEXT)
                g->bad |= BIT(HV_IND_NEXT);
            else if (k)
                g->bad |= BIT(HV_P_IND_CHAIN);
            ptable(sq, env, g, d->addr, d->len);
        } else {
            element(env, g, d->addr, d->len, d->flags);
        }
        if (!(d->flags & VRING_DESC_F_NEXT))
            return (uint16_t)(k + 1u);
        if (k + 1u == sq->num) {
            g->bad |= BIT(HV_CHAIN_LOOP); /* every descriptor, and NEXT still */
            return sq->num;
        }
    }
}

/* s2.8.10: the driver's structure within its values; the device's as the
 * device left it. */
static uint64_t pevents(const struct sim_queue *sq, const struct simchk_env *env)
{
    uint64_t bad = 0;
    uint16_t f = sq->driver_ev->flags, ow = sq->driver_ev->off_wrap;
    if (f > VRING_PACKED_EVENT_DESC)
        bad |= BIT(HV_P_EVENT_FLAGS);
    if (f == VRING_PACKED_EVENT_DESC && (ow & EV_OFF) >= sq->num)
        bad |= BIT(HV_P_EVENT_OFF);
    uint32_t dev = sq->device_ev->off_wrap | (uint32_t)sq->device_ev->flags << 16;
    if (dev != env->dev_event0)
        bad |= BIT(HV_DEV_AREA);
    return bad;
}

uint64_t simchk_packed(const struct sim_queue *sq, const struct simchk_env *env)
{
    uint64_t bad = pevents(sq, env);
    uint8_t ids[0x10000 / 8] = {0};
    uint16_t i = sq->last_avail;
    for (uint32_t seen = 0; seen < sq->num;) {
        uint16_t f = sq->pdesc[i & (sq->num - 1)].flags & PF_BOTH;
        if (f != pavail(sq, i)) {
            if (f == pused(sq, i))
                bad |= BIT(HV_P_FLAGS_USED);
            else if (f == pavail(sq, (uint16_t)(i + sq->num)))
                bad |= BIT(HV_P_WRAP);
            return bad; /* else the last lap's used descriptor: nothing more */
        }
        struct gather g = {0};
        uint16_t id = 0, n = plist(sq, env, &g, i, &id);
        if (seen_before(ids, id))
            g.bad |= BIT(HV_P_ID_TWICE);
        bad |= g.bad;
        if (g.bad & BIT(HV_P_CHAIN_WRAP))
            return bad; /* the device cannot tell where the next buffer starts */
        if (!g.bad && !env->rx)
            bad |= header(env, &g);
        i = (uint16_t)(i + n);
        seen += n;
    }
    return bad;
}
