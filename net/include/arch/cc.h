/* lwIP architecture glue: newlib types, x86_64 byte order, our exits. */
#ifndef VN_LWIP_ARCH_CC_H
#define VN_LWIP_ARCH_CC_H

#include <stdio.h>

#include "kernel/exit.h"

#define LWIP_PLATFORM_DIAG(x)                                                                      \
    do {                                                                                           \
        printf x;                                                                                  \
    } while (0)
#define LWIP_PLATFORM_ASSERT(x)                                                                    \
    vn_fatal(VN_EXIT_INTERNAL, "lwIP assertion \"%s\" failed at %s:%d", x, __FILE__, __LINE__)

#define lwip_htons(x) __builtin_bswap16(x)
#define lwip_htonl(x) __builtin_bswap32(x)

unsigned net_rand(void);
#define LWIP_RAND() net_rand()

#define LWIP_NO_UNISTD_H 1
#define SSIZE_MAX        0x7fffffffffffffffL /* newlib defines ssize_t itself */

#endif
