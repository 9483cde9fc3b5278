/* Exit codes, shared with the host runner (tools/vnperf) and docs/protocol.md.
 * The guest writes the code to isa-debug-exit; QEMU then exits with
 * (code << 1) | 1. */
#ifndef VN_EXIT_H
#define VN_EXIT_H

enum vn_exit {
    VN_EXIT_OK = 0,
    VN_EXIT_TEST_FAILED = 1,
    VN_EXIT_CONFIG = 2,
    VN_EXIT_FAULT = 3,
    VN_EXIT_DEVICE = 4,
    VN_EXIT_OOM = 5,
    VN_EXIT_NO_DEVICE = 6,
    VN_EXIT_INTERNAL = 7,
    VN_EXIT_TIMEOUT = 8,
    VN_EXIT_NETWORK = 9, /* peer unreachable: ARP/DHCP/TCP connect failed */
};

const char *vn_exit_name(int code);

/* Prints the exit line and leaves QEMU with the code; never returns. */
void vn_exit(int code) __attribute__((noreturn));

/* One clear line on the console, then vn_exit(code). */
void vn_fatal(int code, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

#endif
