/* app=rr proto=udp with several queue pairs and CPUs: one instance per
 * vCPU on the raw path, the server (apps/rr_mq.c) and the client
 * (apps/rr_mq_client.c). */
#ifndef VN_RR_MQ_H
#define VN_RR_MQ_H

#include <stdbool.h>

struct app_config;

/* Whether UDP rr runs per vCPU: more than one CPU up and more than one
 * pair asked for (queues=); the client over IPv4 only. */
bool rr_mq_wanted(const struct app_config *c);

/* The per-vCPU UDP server's whole run (from apps_net_init on) and
 * result; the exit code. */
int rr_mq_server(const struct app_config *c);

/* The per-vCPU UDP client's whole run and result; the exit code. */
int rr_mq_client(const struct app_config *c);

#endif
