/* Small JSON writer into a caller's buffer. Never writes past cap; an
 * overflowing document is flagged and rendered as {"truncated":true}. */
#ifndef VN_JSON_H
#define VN_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_DEPTH 16

struct json {
    char *buf;
    size_t cap;
    size_t len;
    bool overflow;
    int depth;
    bool need_comma[JSON_MAX_DEPTH];
};

void json_init(struct json *j, char *buf, size_t cap);
/* key is NULL inside arrays and for the top-level value. */
void json_obj_begin(struct json *j, const char *key);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j, const char *key);
void json_arr_end(struct json *j);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
void json_double(struct json *j, const char *key, double v); /* NaN/inf -> null */
void json_bool(struct json *j, const char *key, bool v);
void json_str(struct json *j, const char *key, const char *s);
void json_null(struct json *j, const char *key);
/* NUL-terminated text; a broken (overflowed, unbalanced) document yields
 * a valid stand-in object instead. */
const char *json_finish(struct json *j);

#endif
