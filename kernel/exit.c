/* Leaving the guest: the exit line, then isa-debug-exit. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kernel/esc.h"
#include "kernel/exit.h"
#include "kernel/io.h"
#include "kernel/result.h"

#define ISA_DEBUG_EXIT_PORT 0xf4

void vn_exit(int code)
{
    static int exiting;

    if (!exiting) {
        exiting = 1;
        struct json *j = result_begin("exit");
        json_i64(j, "code", code);
        json_str(j, "reason", vn_exit_name(code));
        result_end();
        fflush(stdout);
    }
    /* QEMU leaves with (code << 1) | 1 when isa-debug-exit is present. */
    pio_write32(ISA_DEBUG_EXIT_PORT, (uint32_t)code);
    /* No isa-debug-exit device: halt for good, the runner's timeout and
     * the exit line above tell what happened. */
    for (;;)
        __asm__ volatile("cli; hlt");
}

void vn_fatal(int code, const char *fmt, ...)
{
    char raw[256];
    /* Messages quote values from outside (a bad config word): escaped, so
     * the line stays one line that no value can end early (kernel/esc.h). */
    static char msg[ESC_CAP(sizeof(raw))];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);
    esc_text(msg, sizeof(msg), raw, strlen(raw));
    printf("FATAL: %s\n", msg);
    struct json *j = result_begin("error");
    json_i64(j, "code", code);
    json_str(j, "reason", vn_exit_name(code));
    json_str(j, "message", msg);
    result_end();
    vn_exit(code);
}
