/* The end of a run on a device that broke the rules. */
#include <stdio.h>

#include "drivers/virtio/vnet_priv.h"
#include "kernel/exit.h"
#include "kernel/result.h"

void vnet_die_broken(const struct vnet_dev *d)
{
    const struct virtq *vq = virtq_broken(d->rx) ? d->rx : d->tx;
    const char *queue = d->fail_queue ? d->fail_queue : virtq_broken(d->rx) ? "rx" : "tx";
    const struct virtq_violation *bad = virtq_violation(vq);
    static const struct virtq_violation none = {"broken", 0, 0, 0, 0, 0};
    if (!bad)
        bad = &none;
    char msg[160];
    snprintf(msg, sizeof(msg), "%s %s: %s (id %u len %u limit %u)", d->vdev->name, queue, bad->what,
             bad->id, bad->len, bad->limit);
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
