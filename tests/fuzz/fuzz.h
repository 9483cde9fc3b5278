/* Shared by the libFuzzer harnesses (tests/fuzz/README.md). */
#ifndef VN_FUZZ_H
#define VN_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A cross-check against the harness's own model failed: the sanitizers do
 * not see a wrong number, so the harness says what and aborts. */
#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: cross-check failed: %s\n", __FILE__, __LINE__, #cond);         \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* The input as a NUL-terminated string in a buffer of exactly n + 1 bytes,
 * so ASan sees a read past the terminator. Free with free(). */
static inline char *fuzz_cstr(const uint8_t *data, size_t n)
{
    char *s = malloc(n + 1);
    if (!s)
        abort();
    memcpy(s, data, n);
    s[n] = '\0';
    return s;
}

/* A C string's bytes, none past its NUL within cap. */
static inline int fuzz_terminated(const char *s, size_t cap)
{
    return memchr(s, '\0', cap) != NULL;
}

#endif
