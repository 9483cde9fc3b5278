#include "apps/app_config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "apps/app.h"
#include "apps/flows.h"
#include "apps/imix.h"
#include "apps/pcap_sched.h"
#include "apps/rate.h"
#include "apps/reneg_sets.h"
#include "drivers/virtio/vnet.h"

static int app_check(const char *val, char *why, size_t whylen)
{
    if (app_find(val))
        return 0;
    size_t n = (size_t)snprintf(why, whylen, "no such app (allowed ");
    for (unsigned i = 0; i < app_count && n < whylen; i++)
        n += (size_t)snprintf(why + n, whylen - n, "%s%s", i ? "|" : "", app_table[i].name);
    if (n < whylen)
        snprintf(why + n, whylen - n, ")");
    return -EINVAL;
}

/* dst_ip6= is reached on-link through ip6='s /64: no IPv6 router is
 * configured (lwIP's nd6 counts a static address's /64 as on-link). */
static int ip6_pair_check(const struct app_config *c, char *err, size_t errlen)
{
    if (!app_config_given(c, "dst_ip6"))
        return 0;
    if (!app_config_given(c, "ip6")) {
        snprintf(err, errlen, "config: dst_ip6= needs ip6= (our address in the same /64)");
        return -EINVAL;
    }
    if (memcmp(c->ip6, c->dst_ip6, 8) != 0) {
        snprintf(err, errlen,
                 "config: dst_ip6= is not in ip6='s /64 (no IPv6 router: on-link only)");
        return -EINVAL;
    }
    if (memcmp(c->ip6, c->dst_ip6, 16) == 0) {
        snprintf(err, errlen, "config: dst_ip6= is our own ip6=");
        return -EINVAL;
    }
    return 0;
}

/* netif_vlan= tags lwIP's frames: the apps whose traffic goes through
 * lwIP only (the others build their own frames; streams tag those). */
static int netif_vlan_check(const struct app_config *c, char *err, size_t errlen)
{
    if (!c->netif_vlan && !app_config_given(c, "netif_pcp") && !c->netif_svlan)
        return 0;
    if (!c->netif_vlan) {
        snprintf(err, errlen, "config: %s= needs netif_vlan= (1..4094)",
                 c->netif_svlan ? "netif_svlan" : "netif_pcp");
        return -EINVAL;
    }
    if (strcmp(c->app, "iperf") != 0 && strcmp(c->app, "rr") != 0) {
        snprintf(err, errlen,
                 "config: netif_vlan= tags lwIP's frames: app=iperf or app=rr (app=%s builds its "
                 "own frames: a stream's vlan tags them, docs/streams.md)",
                 c->app);
        return -EINVAL;
    }
    return 0;
}

int app_config_check(const struct app_config *c, char *err, size_t errlen)
{
    const struct {
        const char *key, *val;
        int (*check)(const char *val, char *why, size_t whylen);
    } keys[] = {
        {"app", c->app, app_check},
        {"features", c->features, vnet_features_check},
        {"rate", c->rate, rate_check},
        {"imix", c->imix, imix_check},
        {"flows", c->flows, flows_check},
        {"notify", c->notify, vnet_notify_check},
        {"speed", c->speed, pcap_speed_check},
        {"sets", c->sets, reneg_sets_check},
    };
    char why[256]; /* the features= list of names fits */
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        why[0] = '\0';
        if (keys[i].check(keys[i].val, why, sizeof(why)) < 0) {
            snprintf(err, errlen, "config: %s=%s: %s", keys[i].key, keys[i].val, why);
            return -EINVAL;
        }
    }
    if (netif_vlan_check(c, err, errlen) < 0)
        return -EINVAL;
    return ip6_pair_check(c, err, errlen);
}
