#include <string.h>

#include "apps/app.h"
#include "apps/app_list.h"

const struct app app_table[] = {
    {"selftest", "kernel self-test: heap stress, timer check, JSON", app_selftest_main},
    {"fault", "raises a CPU exception (fault=pf|ud|gp|de) to test the fault path", app_fault_main},
    {"alloc", "allocates alloc_mb MiB from the heap (out-of-memory path)", app_alloc_main},
    {"gen",
     "UDP generator: raw fast path or lwIP (path=), rate=, burst=, flows=, imix=", app_gen_main},
    {"sink", "counts UDP frames per stream: loss, duplicates, reordering", app_sink_main},
    {"reflect", "sends UDP frames back (MAC, IP and port swap), zero-copy", app_reflect_main},
    {"fwd", "L2 forwarder between two virtio-net devices, zero-copy", app_fwd_main},
    {"rr", "request/response latency over UDP or TCP (netperf RR)", app_rr_main},
    {"iperf",
     "TCP stream with iperf 2 on the host: client or server, msg_size=, sessions=", app_iperf_main},
    {"replay",
     "sends a capture's frames (fw_cfg opt/vnperf/pcap): speed=, rate=, loops=", app_replay_main},
    {"hostile", "breaks a virtio rule per case (case=), reports what the device did",
     app_hostile_main},
    {"reneg", "one boot, several feature sets (sets=): reset, negotiate, count= frames each",
     app_reneg_main},
};

const unsigned app_count = sizeof(app_table) / sizeof(app_table[0]);

const struct app *app_find(const char *name)
{
    for (unsigned i = 0; i < app_count; i++)
        if (strcmp(app_table[i].name, name) == 0)
            return &app_table[i];
    return 0;
}
