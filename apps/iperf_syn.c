/* app=iperf role=server: half-open connections under a SYN flood. lwIP
 * gives every SYN to a listener a pcb in SYN_RCVD, held up to 20 s
 * (TCP_SYN_RCVD_TIMEOUT, tcp_priv.h), and a SYN that finds the pcb pool
 * spent gets none (tcp_listen_input): spoofed SYNs shut real clients out
 * until theirs time out. So a half-open pcb gets the lowest priority and
 * lwIP's own tcp_alloc -> tcp_kill_prio evicts the oldest of them for a
 * new SYN; the accept raises it back, so a flood never evicts a stream.
 * The listener's ext-arg passive_open callback (lwIP's hook for each pcb
 * a listener opens) marks them; the destroy callback counts the ones
 * freed before their handshake completed. lwIP itself is unchanged. */
#include "apps/iperf.h"
#include "kernel/json.h"
#include "lwip/tcp.h"

static struct iperf_syn {
    uint64_t opened, accepted, dropped, refused;
} syn;
static uint8_t syn_id = LWIP_TCP_PCB_NUM_EXT_ARG_ID_INVALID;
/* The mark of a half-open pcb: its ext arg points here. */
static const char half_open;

static void syn_destroyed(uint8_t id, void *data)
{
    (void)id;
    if (data == &half_open)
        syn.dropped++;
}

static const struct tcp_ext_arg_callbacks half_open_callbacks = {syn_destroyed, NULL};

static err_t syn_passive_open(uint8_t id, struct tcp_pcb_listen *lpcb, struct tcp_pcb *cpcb)
{
    (void)lpcb;
    syn.opened++;
    tcp_setprio(cpcb, TCP_PRIO_MIN);
    tcp_ext_arg_set(cpcb, id, (void *)&half_open);
    tcp_ext_arg_set_callbacks(cpcb, id, &half_open_callbacks);
    return ERR_OK;
}

static const struct tcp_ext_arg_callbacks listen_callbacks = {NULL, syn_passive_open};

void iperf_syn_listen(struct tcp_pcb *pcb)
{
    if (syn_id == LWIP_TCP_PCB_NUM_EXT_ARG_ID_INVALID)
        syn_id = tcp_ext_arg_alloc_id();
    /* tcp_listen copies the ext args to the listening pcb. */
    tcp_ext_arg_set_callbacks(pcb, syn_id, &listen_callbacks);
}

void iperf_syn_accepted(struct tcp_pcb *pcb)
{
    syn.accepted++;
    tcp_ext_arg_set(pcb, syn_id, NULL);
    tcp_setprio(pcb, TCP_PRIO_NORMAL);
}

void iperf_syn_refused(void)
{
    syn.refused++;
}

void iperf_syn_json(struct json *j)
{
    json_obj_begin(j, "syn");
    json_u64(j, "opened", syn.opened);
    json_u64(j, "accepted", syn.accepted);
    json_u64(j, "dropped", syn.dropped);
    json_u64(j, "refused", syn.refused);
    json_obj_end(j);
}

uint64_t iperf_syn_lost(void)
{
    return syn.dropped + syn.refused;
}
