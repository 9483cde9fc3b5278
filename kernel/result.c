#include <stdio.h>

#include "kernel/result.h"

/* Room for the largest line: iperf's result with 128 sessions (~70 bytes
 * each) and the driver's counters took more than 8 KiB and went out as the
 * stand-in {"truncated":true}. */
static char result_buf[32768];
static struct json result_json;

struct json *result_begin(const char *type)
{
    json_init(&result_json, result_buf, sizeof(result_buf));
    json_obj_begin(&result_json, NULL);
    json_str(&result_json, "type", type);
    return &result_json;
}

void result_end(void)
{
    json_obj_end(&result_json);
    printf(RESULT_PREFIX "%s\n", json_finish(&result_json));
}
