/* The config keys whose values belong above the kernel (app=, rate=,
 * imix=, flows=, features=), checked once the line is parsed. */
#ifndef VN_APP_CONFIG_H
#define VN_APP_CONFIG_H

#include <stddef.h>

#include "kernel/config.h"

/* 0, or -EINVAL with one line naming the key, the value and why in err
 * (the parser's own format). */
int app_config_check(const struct vn_config *c, char *err, size_t errlen);

#endif
