/* Machine-readable lines of the results protocol (docs/protocol.md):
 * "@vnperf " followed by one JSON object with a "type" member. */
#ifndef VN_RESULT_H
#define VN_RESULT_H

#include "kernel/json.h"

#define RESULT_PREFIX "@vnperf "

/* Opens a line of the given type ("ready", "sample", "result", "error",
 * "exit", ...). Only one line is open at a time. */
struct json *result_begin(const char *type);
/* Closes the object and prints the line. */
void result_end(void);

#endif
