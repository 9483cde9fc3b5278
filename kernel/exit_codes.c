/* The reasons of the exit codes (kernel/exit.h). */
#include "kernel/exit.h"

/* QEMU's status is (code << 1) | 1 in 8 bits, and the runner's own
 * statuses start at VN_EXIT_RUNNER_FIRST: a guest code stays below. */
#define VN_EXIT_BELOW(name, code, reason)                                                          \
    _Static_assert((code) >= 0 && (code) < VN_EXIT_RUNNER_FIRST, "exit code " #name);
VN_EXIT_CODES(VN_EXIT_BELOW)
#undef VN_EXIT_BELOW
_Static_assert(VN_EXIT_RUNNER_FIRST <= 127, "(code << 1) | 1 fits QEMU's 8-bit status");

static const char *const exit_names[] = {
#define VN_EXIT_NAME(name, code, reason) [code] = reason,
    VN_EXIT_CODES(VN_EXIT_NAME)
#undef VN_EXIT_NAME
};

const char *vn_exit_name(int code)
{
    if (code < 0 || (unsigned)code >= sizeof(exit_names) / sizeof(exit_names[0]) ||
        !exit_names[code])
        return "unknown";
    return exit_names[code];
}
