/* lwIP architecture glue for the vnperf kernel (newlib, x86_64). */
#ifndef VN_LWIP_ARCH_CC_H
#define VN_LWIP_ARCH_CC_H

#include <stdio.h>
#include <stdlib.h>

#define LWIP_PLATFORM_DIAG(x) do { printf x; } while (0)
void vn_lwip_assert(const char *msg, const char *file, int line) __attribute__((noreturn));
#define LWIP_PLATFORM_ASSERT(x) vn_lwip_assert((x), __FILE__, __LINE__)
#define LWIP_RAND() ((u32_t)rand())
#define LWIP_NO_UNISTD_H 1
#define SSIZE_MAX        0x7fffffffffffffffL /* newlib defines ssize_t itself */

#endif
