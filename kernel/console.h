#ifndef VN_CONSOLE_H
#define VN_CONSOLE_H

#include <stddef.h>

void console_init(void);
void console_write(const char *s, size_t n);

#endif
