#include <string.h>

#include "apps/app.h"
#include "apps/app_list.h"

const struct app app_table[] = {
    {"selftest", "kernel self-test: heap stress, timer check, JSON", app_selftest_main},
    {"fault", "raises a CPU exception (fault=pf|ud|gp|de) to test the fault path", app_fault_main},
    {"alloc", "allocates alloc_mb MiB from the heap (out-of-memory path)", app_alloc_main},
};

const unsigned app_count = sizeof(app_table) / sizeof(app_table[0]);

const struct app *app_find(const char *name)
{
    for (unsigned i = 0; i < app_count; i++)
        if (strcmp(app_table[i].name, name) == 0)
            return &app_table[i];
    return 0;
}
