/* apps/seqtrack.c against a reference model that remembers every number
 * it was given. Inputs are sequences of numbers near a base the input
 * picks (0, 2^63, or the top of the 64-bit space), with jumps, repeats
 * and numbers far behind the window. */
#include "apps/seqtrack.h"
#include "tests/fuzz/fuzz.h"

#define MAX_OPS   2048
#define SET_SLOTS 4096 /* open addressing, at most half full */

struct model {
    uint64_t set[SET_SLOTS];
    bool used[SET_SLOTS];
    size_t nseen;
    bool active;
    uint64_t first, high, unique, dup, reorder, stale;
};

static size_t slot(const struct model *m, uint64_t q)
{
    size_t i = (size_t)((q * 0x9e3779b97f4a7c15ull) >> 52) % SET_SLOTS;
    while (m->used[i] && m->set[i] != q)
        i = (i + 1) % SET_SLOTS;
    return i;
}

static bool seen(const struct model *m, uint64_t q)
{
    return m->used[slot(m, q)];
}

static void remember(struct model *m, uint64_t q)
{
    size_t i = slot(m, q);
    m->used[i] = true;
    m->set[i] = q;
    m->nseen++;
}

/* The documented rule: new below first or above high; stale SEQ_WIN or
 * more below high; else a duplicate exactly when seen before. */
static int model_record(struct model *m, uint64_t q)
{
    int is_new;
    if (!m->active) {
        m->active = true;
        m->first = m->high = q;
        is_new = 1;
    } else if (q > m->high) {
        m->high = q;
        is_new = 1;
    } else if (q < m->first) {
        m->first = q;
        m->reorder++;
        is_new = 1;
    } else if (m->high - q >= SEQ_WIN) {
        m->stale++;
        return 0;
    } else if (seen(m, q)) {
        m->dup++;
        return 0;
    } else {
        m->reorder++;
        is_new = 1;
    }
    remember(m, q);
    m->unique++;
    return is_new;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    static const uint64_t bases[4] = {0, 1ull << 63, UINT64_MAX - 3000, UINT64_MAX - 2 * SEQ_WIN};
    static struct model m;
    static struct seq_stream s;
    if (n < 1)
        return 0;
    uint64_t cur = bases[data[0] & 3];
    memset(&m, 0, sizeof(m));
    memset(&s, 0, sizeof(s));
    for (size_t i = 1; i + 3 <= n && m.nseen < MAX_OPS; i += 3) {
        /* A signed step from the previous number, sometimes a big one. */
        int16_t step;
        memcpy(&step, data + i + 1, 2);
        uint64_t d = data[i] & 0x80 ? (uint64_t)(int64_t)step * 64 : (uint64_t)(int64_t)step;
        cur += d; /* wraps on purpose: the tracker must take any 64-bit value */
        int got = seq_record(&s, cur), want = model_record(&m, cur);
        FUZZ_CHECK(got == want);
        FUZZ_CHECK(s.first == m.first && s.high == m.high);
        FUZZ_CHECK(s.unique == m.unique && s.dup == m.dup);
        FUZZ_CHECK(s.reorder == m.reorder && s.stale == m.stale);
        /* Nothing counted twice, so lost is the span less what came. */
        FUZZ_CHECK(s.unique - 1 <= s.high - s.first);
        FUZZ_CHECK(seq_lost(&s) == (s.high - s.first) - (s.unique - 1));
    }
    return 0;
}
