/* drivers/virtio/virtq*.c against a hostile device, split and packed. The
 * input picks the ring format, EVENT_IDX, IN_ORDER and the queue size,
 * then driver operations (add buffers, chains, bind and add slots, kick,
 * get used buffers, enable/disable used buffer notifications) between
 * device moves (fuzz_virtq_dev.c: take, use honestly, set suppression,
 * or write anything anywhere in the ring memory).
 *
 * Always, whatever the device writes: every token handed back is one in
 * flight, and never twice; its length is at most what was offered for
 * writing; in-flight and free descriptors match the model's count; a
 * broken queue stays broken (-EIO, nothing added), and only get_used or
 * virtq_set_broken breaks it. While the device keeps the rules: the queue
 * never breaks, hands back exactly what was used, in order, with the
 * lengths used, says when used buffers are pending, kicks when the
 * device's suppression asks for it, and at the end gets every buffer
 * back. ASan sees stray accesses, UBSan undefined behaviour; the code
 * under test is built with -fsanitize=integer. */
#include "drivers/virtio/virtq.h"
#include "kernel/mem.h"
#include "tests/fuzz/fuzz_virtq.h"

#define MAX_INPUT   4096
#define MAX_OPS     512
#define MAX_BATCH   64
#define SPIN_BUDGET 70000 /* buffers per input: enough to wrap 16-bit indices */

uint8_t fz_in8(struct fz *z)
{
    if (!z->n)
        return 0;
    z->n--;
    return *z->p++;
}

uint16_t fz_in16(struct fz *z)
{
    uint16_t lo = fz_in8(z);
    return (uint16_t)(lo | fz_in8(z) << 8);
}

uint32_t fz_in32(struct fz *z)
{
    uint32_t lo = fz_in16(z);
    return lo | (uint32_t)fz_in16(z) << 16;
}

uint32_t fz_len(struct fz *z)
{
    switch (fz_in8(z) & 3) {
    case 0:
        return fz_in8(z);
    case 1:
        return fz_in16(z);
    case 2:
        return fz_in32(z);
    default:
        return UINT32_MAX - fz_in8(z);
    }
}

void ring16_push(struct ring16 *r, uint16_t v)
{
    FUZZ_CHECK(r->count < r->cap);
    r->v[(r->head + r->count++) % r->cap] = v;
}

uint16_t ring16_pop(struct ring16 *r)
{
    FUZZ_CHECK(r->count > 0);
    uint16_t v = r->v[r->head];
    r->head = (r->head + 1) % r->cap;
    r->count--;
    return v;
}

static uint16_t ring16_peek(const struct ring16 *r, uint32_t i)
{
    return r->v[(r->head + i) % r->cap];
}

static uint64_t slot_addr(void *ctx, uint16_t i)
{
    (void)ctx;
    return BOUND_BASE + (uint64_t)BOUND_STRIDE * i;
}

int fz_find(const struct fz *z, uintptr_t token)
{
    uint64_t s = z->bound ? (token - BOUND_BASE) / BOUND_STRIDE : token & 0xffff;
    if (s >= z->num || !z->m[s].inflight || z->m[s].token != token)
        return -1;
    return (int)s;
}

static void ring_doorbell(const struct virtq_doorbell *db, uint32_t val)
{
    (void)val;
    struct fz *z = db->ctx;
    z->doorbells++;
}

static void fz_setup(struct fz *z, const uint8_t *data, size_t n)
{
    *z = (struct fz){.p = data, .n = n};
    uint8_t cfg = fz_in8(z);
    unsigned flags = (cfg & 1 ? VIRTQ_F_PACKED : 0) | (cfg & 2 ? VIRTQ_F_EVENT_IDX : 0) |
                     (cfg & 4 ? VIRTQ_F_IN_ORDER : 0);
    z->packed = cfg & 1;
    z->event_idx = cfg & 2;
    z->in_order = cfg & 4;
    /* 1 .. 128 mostly; 256 .. VIRTQ_MAX (ten times slower to set up under
     * ASan) one time in 32, the size from the next byte. */
    _Static_assert(VIRTQ_MAX == 1u << (8 + 7), "the largest size below is VIRTQ_MAX");
    unsigned k = cfg >> 3;
    z->num = (uint16_t)(1u << (k < 31 ? k % 8 : 8 + fz_in8(z) % 8));
    FUZZ_CHECK(virtq_create(&z->vq, 0, z->num, flags) == 0);
    struct virtq_doorbell db = {ring_doorbell, 0, z, 0, false};
    virtq_set_doorbell(z->vq, &db);
    z->q.max = z->num;
    simq_attach(&z->q, z->num, virtq_desc_addr(z->vq), virtq_driver_addr(z->vq),
                virtq_device_addr(z->vq), flags);
    z->m = calloc(z->num, sizeof(*z->m));
    z->exp = calloc(z->num, sizeof(*z->exp));
    z->freem = (struct ring16){calloc(z->num, 2), 0, 0, z->num};
    z->added = (struct ring16){calloc(z->num, 2), 0, 0, z->num};
    if (!z->m || !z->exp || !z->freem.v || !z->added.v)
        abort();
    for (uint16_t i = 0; i < z->num; i++)
        ring16_push(&z->freem, i);
    /* Descriptors, driver area, device area, in this order (s2.7.2). */
    uint64_t end = virtq_device_addr(z->vq) + (z->packed ? 4u : 6u + 8u * z->num);
    z->ring = (uint8_t *)(uintptr_t)virtq_desc_addr(z->vq);
    z->ring_bytes = end - virtq_desc_addr(z->vq);
}

static void fz_free(struct fz *z)
{
    free(z->m);
    free(z->exp);
    free(z->freem.v);
    free(z->added.v);
    sim_free_all();
}

/* --- the model --- */

static uint16_t model_nfree(const struct fz *z)
{
    return (uint16_t)(z->num - z->desc_inflight);
}

static void model_add(struct fz *z, uint16_t s, uintptr_t token, uint32_t wlen, uint16_t ndesc,
                      bool writes)
{
    z->m[s] = (struct mbuf){
        .token = token, .wlen = wlen, .ndesc = ndesc, .writes = writes, .inflight = true};
    z->desc_inflight += ndesc;
    z->avail_idx += z->packed ? ndesc : 1;
    if (!z->hostile)
        ring16_push(&z->added, s);
}

/* The driver handed back u (NULL: it was asked for no tokens). */
static void model_take_back(struct fz *z, const struct virtq_used_buf *u)
{
    int s = -1;
    if (!z->hostile) {
        struct expect e = z->exp[z->exp_head];
        z->exp_head = (z->exp_head + 1) % z->num;
        z->exp_count--;
        s = e.m;
        z->len_mismatch += e.mismatch;
        FUZZ_CHECK(!u || (u->token == z->m[s].token && u->len == e.len));
    }
    if (u) {
        s = fz_find(z, u->token);
        FUZZ_CHECK(s >= 0); /* in flight: never unknown, never twice */
        FUZZ_CHECK(u->len <= z->m[s].wlen);
    }
    z->m[s].inflight = false;
    z->desc_inflight -= z->m[s].ndesc;
    if (!z->bound)
        ring16_push(&z->freem, (uint16_t)s);
}

/* Free descriptors up to max; on a bound queue the slots from the next
 * one on not in flight. */
static int model_free_run(const struct fz *z, int max)
{
    if (max > model_nfree(z))
        max = model_nfree(z);
    if (!z->bound)
        return max > 0 ? max : 0;
    int k = 0;
    while (k < max && !z->m[(uint16_t)(z->avail_idx + k) & (z->num - 1)].inflight)
        k++;
    return k;
}

static bool in_window(uint16_t e, uint16_t old, uint16_t new_idx)
{
    return (uint16_t)(new_idx - e - 1) < (uint16_t)(new_idx - old);
}

/* Must the driver kick for [old, new)? 1 yes, 0 no, -1 either (the packed
 * event is recoverable only within two laps; past one lap of additions
 * the driver may notify to be safe). */
static int model_need_kick(const struct fz *z, uint16_t old, uint16_t new_idx)
{
    if (!z->packed)
        return z->event_idx ? in_window(z->dev_event, old, new_idx) : !z->dev_mode;
    if (z->dev_mode == VRING_PACKED_EVENT_DISABLE)
        return 0;
    if (z->dev_mode != VRING_PACKED_EVENT_DESC || !z->event_idx)
        return 1;
    if ((uint16_t)(new_idx - z->dev_event) >= 2u * z->num)
        return -1;
    if (in_window(z->dev_event, old, new_idx))
        return 1;
    return (uint16_t)(new_idx - old) <= z->num ? 0 : -1;
}

/* After every operation. may_break: the operation may break the queue. */
static void check_queue(struct fz *z, bool may_break)
{
    struct virtq *vq = z->vq;
    FUZZ_CHECK(virtq_size(vq) == z->num && virtq_in_flight(vq) == z->desc_inflight);
    FUZZ_CHECK(virtq_nfree(vq) + virtq_in_flight(vq) == z->num);
    FUZZ_CHECK(virtq_bound(vq) == z->bound && virtq_packed(vq) == z->packed);
    FUZZ_CHECK(virtq_stats(vq)->kicks == z->doorbells);
    bool broken = virtq_broken(vq);
    if (z->broken) {
        FUZZ_CHECK(broken);
    } else if (broken) {
        FUZZ_CHECK(may_break && z->hostile);
        z->broken = true;
    }
    const struct virtq_violation *v = virtq_violation(vq);
    FUZZ_CHECK(broken ? v && v->what && v->what[0] : !v);
    if (!z->hostile)
        FUZZ_CHECK(virtq_stats(vq)->len_mismatch == z->len_mismatch);
}

/* --- driver operations --- */

static void do_add_bufs(struct fz *z, int n, bool writes, uint32_t len0)
{
    int k = n < 0 ? 0 : n;
    struct virtq_buf *b = malloc(sizeof(*b) * (size_t)(k ? k : 1)); /* exactly n: ASan */
    if (!b)
        abort();
    for (int i = 0; i < k; i++) {
        uintptr_t token = 0; /* never taken: fewer slots free than descriptors */
        if ((uint32_t)i < z->freem.count)
            token =
                (uintptr_t)(z->serial + (uint64_t)i) << 16 | ring16_peek(&z->freem, (uint32_t)i);
        b[i] = (struct virtq_buf){token, len0 + (uint32_t)i, token};
    }
    int want = z->bound || z->broken || n <= 0 ? 0 : n < model_nfree(z) ? n : model_nfree(z);
    int got = virtq_add_bufs(z->vq, b, n, writes);
    FUZZ_CHECK(got == want);
    for (int i = 0; i < got; i++)
        model_add(z, ring16_pop(&z->freem), b[i].token, writes ? b[i].len : 0, 1, writes);
    z->serial += (uint64_t)k;
    free(b);
}

static void op_add_bufs(struct fz *z)
{
    int n = fz_in8(z) % (MAX_BATCH + 2) - 1;
    bool writes = fz_in8(z) & 1;
    do_add_bufs(z, n, writes, fz_len(z));
}

static void op_add_chain(struct fz *z)
{
    unsigned nr = fz_in8(z) % 5, nw = fz_in8(z) % 5, n = nr + nw;
    struct virtq_seg *seg = malloc(sizeof(*seg) * (n ? n : 1));
    if (!seg)
        abort();
    uint16_t s = z->freem.count ? ring16_peek(&z->freem, 0) : 0;
    uintptr_t token = (uintptr_t)z->serial++ << 16 | s;
    uint64_t wlen = 0;
    for (unsigned i = 0; i < n; i++) {
        seg[i] = (struct virtq_seg){i ? 0x1000u * i : token, fz_len(z)};
        wlen += i >= nr ? seg[i].len : 0;
    }
    int want = z->broken                                           ? -EIO
               : z->bound || !n || n > z->num || wlen > UINT32_MAX ? -EINVAL
               : n > model_nfree(z)                                ? -ENOSPC
                                                                   : 0;
    int rc = virtq_add_chain(z->vq, seg, nr, nw, token);
    FUZZ_CHECK(rc == want);
    if (!rc)
        model_add(z, ring16_pop(&z->freem), token, (uint32_t)wlen, (uint16_t)n, nw > 0);
    free(seg);
}

static void op_bind(struct fz *z)
{
    int want = z->broken ? -EIO : z->desc_inflight ? -EBUSY : 0;
    FUZZ_CHECK(virtq_bind_slots(z->vq, slot_addr, NULL, fz_len(z)) == want);
    if (want)
        return;
    z->bound = true;
    for (uint16_t i = 0; i < z->num; i++)
        z->m[i] = (struct mbuf){.token = slot_addr(NULL, i), .ndesc = 1};
}

/* extra is the caller's header room: 16 bits here, as vnet passes it. */
static void do_add_slots(struct fz *z, int n, uint16_t len0, uint16_t extra)
{
    int k = n < 0 ? 0 : n;
    uint16_t *len = malloc(sizeof(*len) * (size_t)(k ? k : 1));
    if (!len)
        abort();
    for (int i = 0; i < k; i++)
        len[i] = (uint16_t)(len0 + i);
    int want = z->bound && !z->broken ? model_free_run(z, n) : 0;
    FUZZ_CHECK(virtq_add_slots(z->vq, n, len, extra) == want);
    for (int i = 0; i < want; i++) {
        uint16_t s = z->avail_idx & (z->num - 1);
        model_add(z, s, slot_addr(NULL, s), 0, 1, false);
    }
    free(len);
}

static void op_add_slots(struct fz *z)
{
    int n = fz_in8(z) % (MAX_BATCH + 2) - 1;
    uint16_t len0 = fz_in16(z);
    do_add_slots(z, n, len0, fz_in16(z));
}

static void op_free_run(struct fz *z)
{
    int max = fz_in8(z) % (MAX_BATCH + 4) - 2;
    int got = virtq_free_run(z->vq, max);
    FUZZ_CHECK(virtq_next_slot(z->vq) == (z->avail_idx & (z->num - 1)));
    FUZZ_CHECK(got == model_free_run(z, max));
}

static void op_kick(struct fz *z)
{
    uint64_t before = z->doorbells;
    bool kicked = virtq_kick(z->vq);
    FUZZ_CHECK(z->doorbells - before == (kicked ? 1 : 0));
    uint16_t old = z->kick_old, new_idx = z->avail_idx;
    z->kick_old = new_idx;
    if (old == new_idx) {
        FUZZ_CHECK(!kicked);
        return;
    }
    int need = z->hostile ? -1 : model_need_kick(z, old, new_idx);
    if (need >= 0)
        FUZZ_CHECK(kicked == need);
}

static void do_get_used(struct fz *z, int max, bool tokens)
{
    struct virtq_used_buf *out = NULL;
    if (tokens && !(out = malloc(sizeof(*out) * (size_t)(max > 0 ? max : 1)))) /* exactly max */
        abort();
    int got = virtq_get_used(z->vq, out, max);
    if (z->broken)
        FUZZ_CHECK(got == -EIO);
    if (got == -EIO) {
        FUZZ_CHECK(virtq_broken(z->vq));
        got = 0;
    }
    FUZZ_CHECK(got >= 0 && got <= (max > 0 ? max : 0));
    if (!z->hostile)
        FUZZ_CHECK((uint32_t)got == (max < 0                        ? 0
                                     : (uint32_t)max < z->exp_count ? (uint32_t)max
                                                                    : z->exp_count));
    for (int i = 0; i < got; i++)
        model_take_back(z, out ? &out[i] : NULL);
    free(out);
}

static void op_get_used(struct fz *z)
{
    uint8_t b = fz_in8(z);
    int max = b == 0xff ? z->num + 1 : b % (MAX_BATCH + 2) - 1;
    /* Without tokens the model cannot follow a lying device. */
    do_get_used(z, max, z->hostile || !(fz_in8(z) & 1));
}

static void op_has_used(struct fz *z)
{
    bool r = virtq_has_used(z->vq);
    FUZZ_CHECK(z->hostile || r == (z->exp_count > 0));
}

static void op_enable_cb(struct fz *z)
{
    bool r = virtq_enable_cb(z->vq);
    FUZZ_CHECK(virtq_cb_enabled(z->vq));
    FUZZ_CHECK(z->hostile || r == (z->exp_count > 0));
}

static void op_disable_cb(struct fz *z)
{
    virtq_disable_cb(z->vq);
    FUZZ_CHECK(!virtq_cb_enabled(z->vq));
}

static void op_set_broken(struct fz *z)
{
    static const char outside[] = "set from outside";
    const char *first = z->broken ? virtq_violation(z->vq)->what : outside;
    virtq_set_broken(z->vq, VIRTQ_BAD_DEVICE, outside, 1, 2, 3);
    z->hostile = z->broken = true;
    FUZZ_CHECK(virtq_violation(z->vq)->what == first); /* the first one sticks */
}

/* --- device moves --- */

static void op_take(struct fz *z)
{
    dev_take(z, fz_in8(z) % 9); /* 0: all */
}

/* The used length: none, the whole buffer, any, or one byte too many. */
static void op_use(struct fz *z)
{
    if (!z->q.nheld)
        return;
    uint32_t k = fz_in8(z) % z->q.nheld, mode = fz_in8(z) & 3, whole = 0;
    const struct sim_chain *c = &z->q.held[k].chain;
    for (unsigned i = c->nr; i < c->n && i < SIM_SEG_MAX; i++)
        whole += c->len[i];
    uint32_t len = mode == 0 ? 0 : mode == 1 ? whole : mode == 2 ? fz_len(z) : whole + 1;
    dev_complete(z, k, len);
}

static void op_set_event(struct fz *z)
{
    dev_set_event(z, (int8_t)fz_in8(z));
}

static void op_no_notify(struct fz *z)
{
    dev_set_no_notify(z, fz_in8(z) & 1);
}

/* Honest rounds (add a batch, kick, the device takes and uses it all,
 * last first, get it back) to carry the indices round the ring and past
 * 2^16. */
static void op_spin(struct fz *z)
{
    unsigned rounds = (fz_in8(z) % 16u + 1) * 64;
    int batch = z->num < MAX_BATCH ? z->num : MAX_BATCH;
    for (unsigned r = 0; r < rounds && z->spun < SPIN_BUDGET && !z->broken; r++) {
        if (z->bound)
            do_add_slots(z, batch, 60, 12);
        else
            do_add_bufs(z, batch, true, 1500);
        op_kick(z);
        dev_take(z, 0);
        while (z->q.nheld)
            dev_complete(z, z->q.nheld - 1, 0);
        do_get_used(z, MAX_BATCH, true);
        check_queue(z, true);
        z->spun += (uint32_t)batch;
    }
}

struct op {
    void (*fn)(struct fz *z);
    bool may_break;
};

static const struct op ops[] = {
    {op_add_bufs, false},   {op_add_chain, false},  {op_bind, false},      {op_add_slots, false},
    {op_free_run, false},   {op_kick, false},       {op_get_used, true},   {op_has_used, false},
    {op_enable_cb, false},  {op_disable_cb, false}, {op_take, false},      {op_use, false},
    {op_set_event, false},  {op_no_notify, false},  {dev_raw_used, false}, {dev_raw_idx, false},
    {dev_raw_bytes, false}, {op_spin, true},        {op_set_broken, true},
};

/* An honest device at the end: everything comes back. */
static void drain(struct fz *z)
{
    if (z->hostile)
        return;
    dev_take(z, 0);
    while (z->q.nheld)
        dev_complete(z, 0, 0);
    do_get_used(z, z->num + 1, true);
    check_queue(z, false);
    FUZZ_CHECK(z->desc_inflight == 0 && z->exp_count == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    static struct fz z;
    if (n < 1 || n > MAX_INPUT)
        return 0;
    fz_setup(&z, data, n);
    for (unsigned i = 0; i < MAX_OPS && z.n; i++) {
        const struct op *o = &ops[fz_in8(&z) % (sizeof(ops) / sizeof(ops[0]))];
        o->fn(&z);
        check_queue(&z, o->may_break);
    }
    drain(&z);
    fz_free(&z);
    return 0;
}
