/* Entry points of the apps in apps/app_table.c. */
#ifndef VN_APP_LIST_H
#define VN_APP_LIST_H

int app_selftest_main(void);
int app_fault_main(void);
int app_alloc_main(void);
int app_gen_main(void);
int app_sink_main(void);
int app_reflect_main(void);
int app_fwd_main(void);
int app_rr_main(void);
int app_iperf_main(void);

#endif
