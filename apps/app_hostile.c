/* app=hostile: runs the cases of case= (docs/hostile.md) one after the
 * other on one device. Per case: the violation, a watch of
 * HOSTILE_WATCH_MS (the device's status, whether it used anything), a
 * reset and bring-up, then HOSTILE_CHECK frames that must all come back;
 * one "hostile" machine line with what was seen. */
#include <stdio.h>
#include <string.h>

#include "apps/app_config.h"
#include "apps/app_list.h"
#include "apps/apps_net.h"
#include "apps/hostile.h"
#include "apps/hostile_run.h"
#include "drivers/virtio/vnet_raw.h"
#include "kernel/exit.h"
#include "kernel/kernel.h"
#include "kernel/mem.h"

static int hostile_bring_up(const struct app_config *c, struct vnet_dev **d)
{
    struct vnet_params p;
    char why[320];
    if (apps_vnet_params(c, &p, why, sizeof(why)) < 0)
        vn_fatal(VN_EXIT_CONFIG, "config: %s", why);
    if (!app_config_given(c, "ring"))
        p.ring_size = HOSTILE_RING;
    p.offloads = VNET_OFF_TX_CSUM | VNET_OFF_TX_TSO;
    int n = vnet_probe(d, 1, &p, kboot.cmdline);
    if (n < 0)
        vn_fatal(VN_EXIT_DEVICE, "hostile: device bring-up failed (%d)", n);
    return n;
}

int app_hostile_main(const struct app_config *c)
{
    char why[96];
    if (hostile_check(c->hostile_case, why, sizeof(why)) < 0)
        vn_fatal(VN_EXIT_CONFIG, "config: case=%s: %s", c->hostile_case, why);
    struct vnet_dev *d;
    if (hostile_bring_up(c, &d) < 1)
        vn_fatal(VN_EXIT_NO_DEVICE, "hostile: no virtio-net device");
    struct hostile_run run;
    hostile_run_init(&run, c, d);
    const char *p = c->hostile_case;
    bool all = !strcmp(p, "all");
    for (unsigned i = 0; all ? i < hostile_ncases : *p; i++) {
        unsigned n = all ? 0 : (unsigned)strcspn(p, ",");
        hostile_run_case(&run, all ? &hostile_cases[i] : hostile_find(p, n));
        if (!all)
            p += n + (p[n] == ',');
    }
    hostile_run_result(&run);
    return VN_EXIT_OK;
}
