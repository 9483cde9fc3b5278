/* vnet_params from the config line, the same way for every app. */
#include "drivers/virtio/vnet.h"
#include "kernel/config.h"
#include "kernel/exit.h"

void vnet_params_from_config(struct vnet_params *p)
{
    p->ring_size = cfg.ring;
    p->kick_batch = cfg.kick_batch;
    p->rx_refill = cfg.rx_refill;
    p->txfull = cfg.txfull;
    if (vnet_features_parse(cfg.features, &p->features_off))
        vn_fatal(VN_EXIT_CONFIG, "features=%s: not a list of -NAME words", cfg.features);
}
