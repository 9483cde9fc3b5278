/* Entry points of the apps in apps/app_table.c. */
#ifndef VN_APP_LIST_H
#define VN_APP_LIST_H

struct app_config;

int app_selftest_main(const struct app_config *c);
int app_fault_main(const struct app_config *c);
int app_alloc_main(const struct app_config *c);
int app_gen_main(const struct app_config *c);
int app_sink_main(const struct app_config *c);
int app_reflect_main(const struct app_config *c);
int app_fwd_main(const struct app_config *c);
int app_rr_main(const struct app_config *c);
int app_iperf_main(const struct app_config *c);
int app_hostile_main(const struct app_config *c);
int app_replay_main(const struct app_config *c);
int app_reneg_main(const struct app_config *c);

#endif
