/* app=rr role=server proto=udp with several queue pairs and CPUs: one
 * instance per vCPU on the raw path (apps/rr_mq.c). */
#ifndef VN_RR_MQ_H
#define VN_RR_MQ_H

#include <stdbool.h>

struct app_config;

/* Whether the UDP server runs per vCPU: more than one CPU up and more
 * than one pair asked for (queues=). */
bool rr_mq_wanted(const struct app_config *c);

/* The per-vCPU UDP server's whole run (from apps_net_init on) and
 * result; the exit code. */
int rr_mq_server(const struct app_config *c);

#endif
