/* Exit codes, spelled once here: the guest writes the code to
 * isa-debug-exit (QEMU then exits with (code << 1) | 1), its result lines
 * carry the reason, docs/protocol.md lists them, and the host runner's
 * table (tools/vnperflib/exitcodes.py) is checked against this one by
 * tests/unit/test_exitcodes.c. X(name, code, reason). */
#ifndef VN_EXIT_H
#define VN_EXIT_H

#define VN_EXIT_CODES(X)                                                                           \
    X(OK, 0, "ok")                                                                                 \
    X(TEST_FAILED, 1, "test_failed")                                                               \
    X(CONFIG, 2, "config_error")                                                                   \
    X(FAULT, 3, "fault")                                                                           \
    X(DEVICE, 4, "device_error")                                                                   \
    X(OOM, 5, "out_of_memory")                                                                     \
    X(NO_DEVICE, 6, "no_device")                                                                   \
    X(INTERNAL, 7, "internal_error")                                                               \
    X(TIMEOUT, 8, "timeout")                                                                       \
    X(NETWORK, 9, "network_error") /* peer unreachable: ARP/DHCP/TCP connect failed */             \
    X(CPU, 10, "cpu_error")        /* an application processor did not start */

enum vn_exit {
#define VN_EXIT_ENUM(name, code, reason) VN_EXIT_##name = code,
    VN_EXIT_CODES(VN_EXIT_ENUM)
#undef VN_EXIT_ENUM
};

/* The runner's own statuses start here (tools/vnperflib/exitcodes.py). */
#define VN_EXIT_RUNNER_FIRST 64

const char *vn_exit_name(int code);

/* Prints the exit line and leaves QEMU with the code; never returns. */
void vn_exit(int code) __attribute__((noreturn));

/* One clear line on the console, then vn_exit(code). */
void vn_fatal(int code, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

#endif
