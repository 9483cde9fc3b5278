/* Apps: chosen with app= on the config line. Each one registers in
 * apps/app_table.c and returns an exit code (kernel/exit.h). */
#ifndef VN_APP_H
#define VN_APP_H

struct app_config;

struct app {
    const char *name;
    const char *help;
    int (*main)(const struct app_config *c);
};

extern const struct app app_table[];
extern const unsigned app_count;

const struct app *app_find(const char *name);

#endif
