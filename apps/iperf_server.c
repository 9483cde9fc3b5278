/* app=iperf role=server: counts iperf 2 client streams. Every accepted
 * connection is a session that lasts from its accept to the client's
 * FIN (iperf 2's own server interval); bytes are counted as they arrive,
 * so a stream still open when the run ends reports what it got. One
 * that lwIP reports reset or aborted (its error callback) is counted
 * apart from the finished ones and fails the run. lwIP's
 * lwiperf reports a stream only once it has closed, and nothing at all
 * for one cut short (issue 10: "0 of sessions=4 client streams"). */
#include <stdio.h>

#include "apps/iperf.h"
#include "kernel/exit.h"
#include "kernel/time.h"
#include "lwip/tcp.h"
#include "net/net.h"

static struct tcp_pcb *listener;

static void server_end(struct iperf_sess *s, enum iperf_end how)
{
    iperf_sess_end(&iperf_state.ended, s, how, time_cycles());
}

static void server_err(void *arg, err_t err)
{
    struct iperf_sess *s = arg;
    s->pcb = NULL; /* lwIP has freed it */
    if (!s->done)
        printf("iperf: session %u aborted (lwIP err %d)\n", s->idx, err);
    server_end(s, IPERF_END_ABORTED);
}

/* ERR_ABRT when the pcb had to be aborted (a callback must say so). */
static err_t server_close(struct iperf_sess *s)
{
    struct tcp_pcb *pcb = s->pcb;
    s->pcb = NULL;
    net_tcp_rwnd_end(pcb, &s->rwnd);
    tcp_arg(pcb, NULL);
    tcp_recv(pcb, NULL);
    tcp_err(pcb, NULL);
    if (tcp_close(pcb) == ERR_OK)
        return ERR_OK;
    tcp_abort(pcb);
    return ERR_ABRT;
}

static err_t server_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    struct iperf_sess *s = arg;
    (void)err;
    if (!p) {
        server_end(s, IPERF_END_FIN); /* the stream is complete */
        return server_close(s);
    }
    s->bytes += p->tot_len;
    net_tcp_recved(pcb, &s->rwnd, p->tot_len);
    pbuf_free(p);
    return ERR_OK;
}

static err_t server_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
    (void)arg;
    if (err != ERR_OK || !pcb) {
        iperf_syn_refused(); /* lwIP had no pcb for the SYN (tcp_listen_input) */
        return ERR_VAL;
    }
    iperf_syn_accepted(pcb);
    if (iperf_state.accepted == IPERF_MAX_SESS || iperf_state.stop) {
        tcp_abort(pcb);
        return ERR_ABRT;
    }
    struct iperf_sess *s = &iperf_state.s[iperf_state.accepted];
    s->idx = iperf_state.accepted++;
    s->pcb = pcb;
    s->connected = true;
    s->t_start = s->t_end = time_cycles();
    net_tcp_rwnd_start(pcb, &s->rwnd, iperf_state.window);
    tcp_arg(pcb, s);
    tcp_recv(pcb, server_recv);
    tcp_err(pcb, server_err);
    return ERR_OK;
}

void iperf_server_start(void)
{
    struct tcp_pcb *pcb = tcp_new();
    if (!pcb)
        vn_fatal(VN_EXIT_OOM, "iperf: no TCP PCB for the listener");
    if (tcp_bind(pcb, IP_ANY_TYPE, iperf_state.port) != ERR_OK)
        vn_fatal(VN_EXIT_INTERNAL, "iperf: cannot bind port %u", iperf_state.port);
    iperf_syn_listen(pcb);
    listener = tcp_listen(pcb);
    if (!listener)
        vn_fatal(VN_EXIT_OOM, "iperf: no memory to listen on port %u", iperf_state.port);
    tcp_accept(listener, server_accept);
}

/* The run is over: streams still open end here with what they got. */
void iperf_server_stop(void)
{
    iperf_state.stop = true;
    for (unsigned i = 0; i < iperf_state.accepted; i++) {
        struct iperf_sess *s = &iperf_state.s[i];
        if (s->done)
            continue;
        server_end(s, IPERF_END_CUT);
        if (s->pcb)
            server_close(s);
    }
    if (listener)
        tcp_close(listener);
    listener = NULL;
}
