/* The end of a run on a device that broke the rules. */
#include <stdio.h>

#include "drivers/virtio/vnet_priv.h"
#include "kernel/exit.h"
#include "kernel/result.h"

void vnet_die_broken(const struct vnet_dev *d)
{
    const struct virtq *vq = d->rx.broken ? &d->rx : &d->tx;
    const char *queue = d->fail_queue ? d->fail_queue : d->rx.broken ? "rx" : "tx";
    char msg[160];
    snprintf(msg, sizeof(msg), "%s %s: %s (id %u len %u limit %u)", d->vdev->name, queue,
             vq->bad.what ? vq->bad.what : "broken", vq->bad.id, vq->bad.len, vq->bad.limit);
    printf("vnet: %s\n", msg);
    struct json *j = result_begin("error");
    json_u64(j, "code", VN_EXIT_DEVICE);
    json_str(j, "reason", vn_exit_name(VN_EXIT_DEVICE));
    json_str(j, "message", msg);
    json_obj_begin(j, "vnet");
    vnet_stats_json(d, j);
    json_obj_end(j);
    result_end();
    vn_exit(VN_EXIT_DEVICE);
}
