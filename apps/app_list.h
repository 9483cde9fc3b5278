/* Entry points of the apps in apps/app_table.c. */
#ifndef VN_APP_LIST_H
#define VN_APP_LIST_H

int app_selftest_main(void);
int app_fault_main(void);
int app_alloc_main(void);

#endif
