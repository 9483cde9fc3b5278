/* The case builders of app=hostile (hostile_ring.c, hostile_desc.c,
 * hostile_hdr.c, hostile_setup.c, hostile_packed.c), listed in hostile_cases.c's table. */
#ifndef VN_HOSTILE_BUILD_H
#define VN_HOSTILE_BUILD_H

#include "apps/hostile.h"

int hostile_chain_loop(struct hostile_env *e);
int hostile_chain_long(struct hostile_env *e);
int hostile_head_range(struct hostile_env *e);
int hostile_head_twice(struct hostile_env *e);
int hostile_avail_ahead(struct hostile_env *e);
int hostile_avail_back(struct hostile_env *e);
int hostile_event_far(struct hostile_env *e);
int hostile_dev_area(struct hostile_env *e);
int hostile_addr_ram(struct hostile_env *e);
int hostile_addr_mmio(struct hostile_env *e);
int hostile_addr_wrap(struct hostile_env *e);
int hostile_len_zero(struct hostile_env *e);
int hostile_len_max(struct hostile_env *e);
int hostile_write_on_tx(struct hostile_env *e);
int hostile_read_on_rx(struct hostile_env *e);
int hostile_ind_next(struct hostile_env *e);
int hostile_ind_nested(struct hostile_env *e);
int hostile_ind_len16(struct hostile_env *e);
int hostile_ind_len0(struct hostile_env *e);
int hostile_gso_hdrlen(struct hostile_env *e);
int hostile_gso_size0(struct hostile_env *e);
int hostile_csum_past(struct hostile_env *e);
int hostile_numbuf_tx(struct hostile_env *e);
int hostile_runt(struct hostile_env *e);
int hostile_over_mtu(struct hostile_env *e);
int hostile_gso_64k(struct hostile_env *e);
int hostile_features_unoffered(struct hostile_env *e);
int hostile_features_after_ok(struct hostile_env *e);
int hostile_reset_inflight(struct hostile_env *e);
int hostile_queue_size(struct hostile_env *e);
int hostile_ctrl_class(struct hostile_env *e);
int hostile_ctrl_cmd(struct hostile_env *e);
int hostile_ctrl_short(struct hostile_env *e);
int hostile_ctrl_no_ack(struct hostile_env *e);
int hostile_ctrl_ack_ro(struct hostile_env *e);
int hostile_ctrl_pairs0(struct hostile_env *e);
int hostile_ctrl_pairs_over(struct hostile_env *e);
int hostile_rss_queue(struct hostile_env *e);
int hostile_rss_len(struct hostile_env *e);
int hostile_notif_ahead(struct hostile_env *e);
int hostile_notif_behind(struct hostile_env *e);
int hostile_notify_disabled(struct hostile_env *e);
int hostile_qreset_active(struct hostile_env *e);
int hostile_qreset_size(struct hostile_env *e);

/* hostile_setup.c: the transmitq full of valid buffers (made available,
 * not kicked); a queue size the device does not allow (twice its
 * maximum, or 3: not a power of two). */
int hostile_fill(struct hostile_env *e);
uint16_t hostile_bad_size(struct hostile_env *e);
int hostile_p_wrap(struct hostile_env *e);
int hostile_p_flags_used(struct hostile_env *e);
int hostile_p_chain_wrap(struct hostile_env *e);
int hostile_p_id_twice(struct hostile_env *e);
int hostile_p_chain_loop(struct hostile_env *e);
int hostile_p_ind_next(struct hostile_env *e);
int hostile_p_ind_chain(struct hostile_env *e);
int hostile_p_ind_nested(struct hostile_env *e);
int hostile_p_ind_flags(struct hostile_env *e);
int hostile_p_ind_len16(struct hostile_env *e);
int hostile_p_ind_len0(struct hostile_env *e);
int hostile_p_event_flags(struct hostile_env *e);
int hostile_p_event_off(struct hostile_env *e);
int hostile_p_dev_event(struct hostile_env *e);

#endif
