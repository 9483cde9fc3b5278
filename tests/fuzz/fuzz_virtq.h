/* The used-ring harness (fuzz_virtq.c, fuzz_virtq_dev.c): the driver's
 * queue, the device the input plays, and the harness's model of what the
 * driver holds. */
#ifndef VN_FUZZ_VIRTQ_H
#define VN_FUZZ_VIRTQ_H

#include "drivers/virtio/virtq.h"
#include "sim_virtio.h"
#include "tests/fuzz/fuzz.h"

/* Bound slot i lives at BOUND_BASE + i * BOUND_STRIDE; that is its token. */
#define BOUND_BASE   0x40000000u
#define BOUND_STRIDE 0x800u

/* One buffer the driver holds, by model slot: the token's low 16 bits
 * (unbound) or the slot number (bound). */
struct mbuf {
    uintptr_t token;
    uint32_t wlen;  /* device-writable bytes offered */
    uint16_t ndesc; /* descriptors it takes */
    bool writes;    /* has device-writable elements */
    bool inflight;  /* added, not handed back by the driver */
    bool taken;     /* the device read it */
    bool done;      /* the device used it (honestly) */
};

/* What an honest device's used buffers must come back as, in order. */
struct expect {
    uint16_t m;
    uint32_t len;
    bool mismatch; /* a length for a device-readable buffer: counted */
};

/* A ring of model slots: free slots, the add order, expectations. */
struct ring16 {
    uint16_t *v;
    uint32_t head, count, cap;
};

struct fz {
    const uint8_t *p; /* the rest of the input */
    size_t n;
    struct virtq *vq;
    struct sim_queue q;
    uint16_t num;
    bool packed, event_idx, in_order;
    bool bound;
    bool hostile; /* the device broke a rule or wrote shared memory at will */
    bool broken;  /* the model's: the queue must stay broken */
    struct mbuf *m;
    struct ring16 freem, added; /* free model slots; added, not yet taken */
    struct expect *exp;         /* used, not yet handed back (honest) */
    uint32_t exp_head, exp_count;
    uint64_t serial;
    uint32_t desc_inflight;
    uint16_t avail_idx, kick_old; /* the driver's, as the model counts them */
    uint16_t dev_event;           /* the device's avail event, as set */
    int dev_mode;                 /* packed: VRING_PACKED_EVENT_*; split: NO_NOTIFY on */
    uint64_t doorbells, len_mismatch;
    uint32_t spun;
    uint8_t *ring; /* the shared memory, for the device's stray writes */
    size_t ring_bytes;
};

/* Input bytes; 0 once it ends. */
uint8_t fz_in8(struct fz *z);
uint16_t fz_in16(struct fz *z);
uint32_t fz_in32(struct fz *z);
/* A length: small, 16-bit, any, or near 2^32. */
uint32_t fz_len(struct fz *z);

void ring16_push(struct ring16 *r, uint16_t v);
uint16_t ring16_pop(struct ring16 *r);

/* The model slot a token the driver returned names, or -1. */
int fz_find(const struct fz *z, uintptr_t token);

/* The device (fuzz_virtq_dev.c). */
void dev_take(struct fz *z, uint32_t k);
void dev_complete(struct fz *z, uint32_t k, uint32_t len);
void dev_set_event(struct fz *z, int8_t delta);
void dev_set_no_notify(struct fz *z, bool on);
void dev_raw_used(struct fz *z);
void dev_raw_idx(struct fz *z);
void dev_raw_bytes(struct fz *z);

#endif
