/* send --stream-file (tools/peer/peer_gen.h): the sender and, on a
 * thread of its own, the count of the same socket. */
#ifndef PEER_GEN_RUN_H
#define PEER_GEN_RUN_H

#include "tools/peer/peer_gen.h"
#include "tools/peer/peer_run.h"

/* Set by the SIGUSR1 handler: the guest app is ready (--start-on-usr1). */
extern volatile sig_atomic_t peer_gen_go;

/* Reads --stream-file and builds its rx streams (addresses from --src-*
 * and --dst-*). 0, or -EINVAL with one line in err. */
int peer_gen_open(const struct peer_opts *o, struct peer_gen *g, char *err, size_t errlen);

/* Sends g's streams on tx until its stop (signal, --count, --duration,
 * every burst out) while rx (mode count, no limits of its own) counts
 * until the stop signal. tx's status as peer_run_tx's; rx's in *rx_rc. */
int peer_gen_run(struct peer_run *tx, struct peer_run *rx, struct peer_gen *g, int *rx_rc);

#endif
