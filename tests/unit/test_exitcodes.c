/* kernel/exit.h against the host runner's table, tools/vnperflib/
 * exitcodes.py: the same guest codes with the same meaning (the runner's
 * text starts with the guest's reason, '_' read as ' '), and the runner's
 * own statuses all at or above VN_EXIT_RUNNER_FIRST. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/exit.h"

#define PY_FILE "tools/vnperflib/exitcodes.py"

/* The repository root: the unit tests run from it (make unit). */
static FILE *open_py(void)
{
    FILE *f = fopen(PY_FILE, "r");
    if (!f)
        fail_msg("cannot open %s from the repository root", PY_FILE);
    return f;
}

struct py_code {
    int code;
    char text[80];
};

/* The "N: \"text\"," lines of GUEST_CODES = {...}, and the values of the
 * RUNNER_NAME = N lines. */
static void read_py(struct py_code *guest, int *nguest, int *runner, int *nrunner)
{
    FILE *f = open_py();
    char line[256];
    bool in_guest = false;
    *nguest = *nrunner = 0;
    while (fgets(line, sizeof(line), f)) {
        int code, n;
        char name[64];
        if (!strncmp(line, "GUEST_CODES = {", 15)) {
            in_guest = true;
        } else if (in_guest && line[0] == '}') {
            in_guest = false;
        } else if (in_guest &&
                   sscanf(line, " %d: \"%79[^\"]\",", &code, guest[*nguest].text) == 2) {
            guest[(*nguest)++].code = code;
        } else if (sscanf(line, "RUNNER_%63[A-Z_] = %d%n", name, &code, &n) == 2) {
            runner[(*nrunner)++] = code;
        }
        assert_true(*nguest < 64 && *nrunner < 64);
    }
    fclose(f);
}

static void guest_codes_match(void **state)
{
    (void)state;
    static const struct {
        int code;
        const char *reason;
    } ours[] = {
#define VN_EXIT_ROW(name, code, reason) {code, reason},
        VN_EXIT_CODES(VN_EXIT_ROW)
#undef VN_EXIT_ROW
    };
    const int nours = (int)(sizeof(ours) / sizeof(ours[0]));
    struct py_code py[64];
    int runner[64], npy, nrunner;
    read_py(py, &npy, runner, &nrunner);
    if (npy != nours)
        fail_msg("%s has %d guest codes, kernel/exit.h %d", PY_FILE, npy, nours);
    for (int i = 0; i < nours; i++) {
        int k = 0;
        while (k < npy && py[k].code != ours[i].code)
            k++;
        if (k == npy)
            fail_msg("guest code %d (%s) is not in %s", ours[i].code, ours[i].reason, PY_FILE);
        char want[80];
        snprintf(want, sizeof(want), "%s", ours[i].reason);
        for (char *p = want; *p; p++)
            if (*p == '_')
                *p = ' ';
        if (strncmp(py[k].text, want, strlen(want)))
            fail_msg("code %d: %s says '%s', the guest '%s'", ours[i].code, PY_FILE, py[k].text,
                     ours[i].reason);
        assert_string_equal(vn_exit_name(ours[i].code), ours[i].reason);
    }
    if (nrunner < 5)
        fail_msg("%s: only %d RUNNER_ codes found", PY_FILE, nrunner);
    for (int i = 0; i < nrunner; i++)
        if (runner[i] < VN_EXIT_RUNNER_FIRST)
            fail_msg("a runner status %d is below %d, among the guest's", runner[i],
                     VN_EXIT_RUNNER_FIRST);
    assert_string_equal(vn_exit_name(nours + 1), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(guest_codes_match),
    };
    return cmocka_run_group_tests_name("exitcodes", tests, NULL, NULL);
}
