/* A fixed app table for host tests of the config code. */
#include <string.h>

#include "apps/app.h"

static int app_none(const struct app_config *c)
{
    (void)c;
    return 0;
}

const struct app app_table[] = {
    {"selftest", "", app_none},
    {"gen", "", app_none},
    {"iperf", "", app_none},
    {"rr", "", app_none},
};
const unsigned app_count = 4;

const struct app *app_find(const char *name)
{
    for (unsigned i = 0; i < app_count; i++)
        if (strcmp(app_table[i].name, name) == 0)
            return &app_table[i];
    return NULL;
}
