/* apps/hostile_cases.c: case= against a model (the list split at commas,
 * every piece a name of the table; or all), and the refusal's line
 * always terminated. */
#include "apps/hostile.h"
#include "tests/fuzz/fuzz.h"

static int model(const char *s)
{
    if (!strcmp(s, "all"))
        return 1;
    for (;;) {
        size_t n = strcspn(s, ",");
        if (!hostile_find(s, (unsigned)n))
            return 0;
        if (!s[n])
            return 1;
        s += n + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *s = fuzz_cstr(data, size);
    char why[96];
    memset(why, 'x', sizeof(why));
    int r = hostile_check(s, why, sizeof(why));
    FUZZ_CHECK((r == 0) == model(s));
    FUZZ_CHECK(r == 0 || fuzz_terminated(why, sizeof(why)));
    free(s);
    return 0;
}
