/* Delayed ACKs leave within NET_ACK_DELAY_US.
 *
 * lwIP ACKs every second full segment at once (lwIP 2.1.3 src/core/tcp_in.c,
 * tcp_receive: tcp_ack) and sends the delayed ACK of a lone one only from
 * its fast timer (core/tcp.c, tcp_fasttmr, every TCP_TMR_INTERVAL: 250 ms
 * by default, 50 ms in lwipopts.h). A sender with one segment in flight
 * (after a loss: cwnd 1, or BBR pacing from the slow delivery it measured)
 * then moves one segment per timer tick for seconds: 1 of 8 host streams
 * over tap took 5.7 s instead of 1.1 s.
 * RFC 5681 s4.2 allows up to 500 ms; Linux waits at most 40 ms and ACKs at
 * once after idle (tcp_input.c, tcp_event_data_recv). Here the ACK waits
 * only long enough for a streaming sender's next segment, which keeps the
 * ACK-every-second-segment rate of a stream. */
#include "kernel/time.h"
#include "lwip/priv/tcp_priv.h"
#include "net/net_priv.h"

#define NET_ACK_DELAY_US 1000

static uint64_t ack_due; /* TSC; 0: no delayed ACK seen pending */

static bool net_ack_pending(void)
{
    for (struct tcp_pcb *pcb = tcp_active_pcbs; pcb; pcb = pcb->next)
        if (pcb->flags & TF_ACK_DELAY)
            return true;
    return false;
}

/* As tcp_fasttmr does; tcp_output clears the flags once the ACK is out,
 * and keeps them for a retry when the device is full. */
static void net_ack_flush(void)
{
    for (struct tcp_pcb *pcb = tcp_active_pcbs; pcb; pcb = pcb->next)
        if (pcb->flags & TF_ACK_DELAY) {
            tcp_ack_now(pcb);
            tcp_output(pcb);
        }
}

void net_ack_service(void)
{
    if (!net_ack_pending()) {
        ack_due = 0;
        return;
    }
    uint64_t now = time_cycles();
    if (!ack_due) {
        ack_due = now + time_ns_to_cycles(NET_ACK_DELAY_US * 1000u);
        return;
    }
    if (now >= ack_due) {
        net_ack_flush();
        ack_due = 0;
    }
}

uint64_t net_ack_deadline(void)
{
    return ack_due;
}
