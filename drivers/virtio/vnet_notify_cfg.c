/* notify= parsing: the notification mode of each queue. Pure. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "drivers/virtio/vnet.h"

static const char *const vnet_notify_names[] = {"poll", "irq", "hybrid"};
#define VNET_NOTIFY_MODES (sizeof(vnet_notify_names) / sizeof(vnet_notify_names[0]))

const char *vnet_notify_name(uint8_t mode)
{
    return mode < VNET_NOTIFY_MODES ? vnet_notify_names[mode] : "?";
}

/* One mode name of n bytes at s: its enum, -1 if none. */
static int vnet_notify_mode(const char *s, size_t n)
{
    for (unsigned i = 0; i < VNET_NOTIFY_MODES; i++)
        if (strlen(vnet_notify_names[i]) == n && !strncmp(s, vnet_notify_names[i], n))
            return (int)i;
    return -1;
}

int vnet_notify_parse(const char *val, uint8_t *rx, uint8_t *tx)
{
    int m = vnet_notify_mode(val, strlen(val));
    *rx = *tx = VNET_NOTIFY_POLL;
    if (m >= 0) {
        *rx = *tx = (uint8_t)m;
        return 0;
    }
    bool seen_rx = false, seen_tx = false;
    for (const char *p = val; *p;) {
        size_t n = strcspn(p, ",");
        bool is_rx = !strncmp(p, "rx:", 3), is_tx = !strncmp(p, "tx:", 3);
        m = n > 3 ? vnet_notify_mode(p + 3, n - 3) : -1;
        if (m < 0 || (!is_rx && !is_tx) || (is_rx && seen_rx) || (is_tx && seen_tx))
            return -EINVAL;
        seen_rx |= is_rx;
        seen_tx |= is_tx;
        *(is_rx ? rx : tx) = (uint8_t)m;
        p += n;
        if (*p == ',' && *++p == '\0')
            return -EINVAL;
    }
    return seen_rx || seen_tx ? 0 : -EINVAL;
}

int vnet_notify_check(const char *val, char *why, size_t whylen)
{
    uint8_t rx, tx;
    if (vnet_notify_parse(val, &rx, &tx) == 0)
        return 0;
    snprintf(why, whylen, "expected poll|irq|hybrid, or rx:MODE,tx:MODE (each at most once)");
    return -EINVAL;
}
